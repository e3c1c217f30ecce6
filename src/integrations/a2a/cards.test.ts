import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tokenEndpoint } from './cards.ts';

const settings = (values: { token?: string; publicUrl?: string; issuer?: string }) => ({
  'svc.a2a.public-token-endpoint': values.token,
  'svc.oidc.public-url': values.publicUrl,
  'svc.oidc.auth-server-url': values.issuer,
});

describe('tokenEndpoint', () => {
  it('takes the explicit setting verbatim, else the public URL, else the issuer, as a Keycloak-style realm URL', () => {
    assert.equal(
      tokenEndpoint(settings({ token: 'https://t.example/x/', publicUrl: 'https://p.example' })),
      'https://t.example/x/',
    );
    assert.equal(
      tokenEndpoint(settings({ publicUrl: 'https://p.example/realms/a//', issuer: 'https://i.example' })),
      'https://p.example/realms/a/protocol/openid-connect/token',
    );
    assert.equal(
      tokenEndpoint(settings({ issuer: 'https://i.example/realms/a' })),
      'https://i.example/realms/a/protocol/openid-connect/token',
    );
    assert.equal(
      tokenEndpoint(settings({ issuer: 'https://i.example/realms/a/protocol/openid-connect/token' })),
      'https://i.example/realms/a/protocol/openid-connect/token',
    );
    assert.equal(tokenEndpoint(settings({})), undefined);
  });
});
