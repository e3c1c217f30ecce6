import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedMap } from './bounded-map.ts';
import { tokenEndpoint } from './cards.ts';

const settings = (values: { token?: string; publicUrl?: string; issuer?: string }) => ({
  'svc.a2a.public-token-endpoint': values.token,
  'svc.oidc.public-url': values.publicUrl,
  'svc.oidc.auth-server-url': values.issuer,
});

describe('tokenEndpoint', () => {
  it('takes the explicit setting verbatim, else the public URL, else the issuer, as a Keycloak-style realm URL', () => {
    assert.equal(tokenEndpoint(settings({ token: 'https://t.example/x/', publicUrl: 'https://p.example' })), 'https://t.example/x/');
    assert.equal(tokenEndpoint(settings({ publicUrl: 'https://p.example/realms/a//', issuer: 'https://i.example' })), 'https://p.example/realms/a/protocol/openid-connect/token');
    assert.equal(tokenEndpoint(settings({ issuer: 'https://i.example/realms/a' })), 'https://i.example/realms/a/protocol/openid-connect/token');
    assert.equal(tokenEndpoint(settings({ issuer: 'https://i.example/realms/a/protocol/openid-connect/token' })), 'https://i.example/realms/a/protocol/openid-connect/token');
    assert.equal(tokenEndpoint(settings({})), undefined);
  });
});

describe('BoundedMap', () => {
  it('drops the least recently used entry beyond its capacity', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    assert.equal(map.get('a'), 1); // a is now the most recent
    map.set('c', 3);
    assert.equal(map.get('b'), undefined);
    assert.equal(map.get('a'), 1);
    assert.equal(map.get('c'), 3);
    assert.equal(map.size, 2);
    assert.throws(() => new BoundedMap(0), RangeError);
  });
});
