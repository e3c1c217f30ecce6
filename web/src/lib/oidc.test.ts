import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { authorizationUrl, codeChallenge, expiryOf, jwtClaims, permissionsOf, principalOf, randomValue, refreshDelay, rolesOf } from './oidc.ts';

const jwt = (claims: Record<string, unknown>) => `h.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.s`;

describe('oidc', () => {
  it('makes URL-safe random values and the S256 challenge (SHA-256, base64url)', async () => {
    const verifier = randomValue();
    assert.match(verifier, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(verifier, randomValue());
    assert.equal(await codeChallenge(verifier), createHash('sha256').update(verifier).digest('base64url'));
  });

  it('builds the authorization request', () => {
    const url = new URL(authorizationUrl('https://idp.example/auth?kc=1', { clientId: 'svc', redirectUri: 'https://m/cb', state: 's', nonce: 'n', challenge: 'c' }));
    assert.equal(url.searchParams.get('kc'), '1');
    assert.equal(url.searchParams.get('response_type'), 'code');
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(url.searchParams.get('scope'), 'openid profile offline_access');
    assert.equal(url.searchParams.get('prompt'), null);
  });

  it('reads roles and the principal where the service reads them', () => {
    const claims = jwtClaims(jwt({ sub: 's1', preferred_username: 'ada', realm_access: { roles: ['svc-viewer'] }, resource_access: { svc: { roles: ['svc-editor'] }, other: { roles: ['svc-admin'] } }, roles: ['svc-user', 7] }));
    assert.deepEqual(rolesOf(claims, 'svc'), ['svc-viewer', 'svc-editor', 'svc-user']);
    assert.equal(principalOf(claims), 'ada');
    assert.equal(principalOf({ sub: 's1' }), 's1');
    assert.equal(jwtClaims('opaque-token'), undefined);
    assert.deepEqual(permissionsOf(['svc-viewer']), { canWrite: false, canConverse: false, isAdmin: false });
    assert.deepEqual(permissionsOf(['svc-editor']), { canWrite: true, canConverse: true, isAdmin: false });
    assert.deepEqual(permissionsOf(['svc-admin']), { canWrite: true, canConverse: true, isAdmin: true });
    assert.deepEqual(permissionsOf(['svc-user']), { canWrite: false, canConverse: true, isAdmin: false });
  });

  it('knows when a token expires and refreshes it ahead of time', () => {
    assert.equal(expiryOf({ access_token: 'x', expires_in: 20 }, 1_000), 21_000);
    assert.equal(expiryOf({ access_token: jwt({ exp: 100 }) }, 0), 100_000);
    assert.equal(expiryOf({ access_token: 'opaque' }, 0), undefined);
    assert.equal(refreshDelay(20_000, 0), 15_000);
    assert.equal(refreshDelay(300_000, 0), 240_000);
    assert.equal(refreshDelay(3_600_000, 0), 3_540_000);
    assert.equal(refreshDelay(0, 1_000), 0);
  });
});
