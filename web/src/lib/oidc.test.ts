import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import {
  authorizationRequest,
  describeFailure,
  discover,
  endSessionUrl,
  exchangeCode,
  expiryOf,
  jwtClaims,
  permissionsOf,
  principalOf,
  refreshDelay,
  refreshTokens,
  rolesOf,
  subjectOf,
  type OidcProvider,
  type PendingSignIn,
} from './oidc.ts';

const jwt = (claims: Record<string, unknown>) => `h.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.s`;

const CLIENT_ID = 'svc-agents';
const REDIRECT_URI = 'http://manager.test/manager/callback';

/**
 * A provider on a loopback port as far as the manager talks to it: discovery, its signing keys, and a token endpoint
 * that answers with an ID token signed by its key (or, when a test says so, by a key it does not publish) carrying
 * the claims the test sets.
 */
async function startProvider() {
  const key = await generateKeyPair('RS256');
  const foreignKey = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(key.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const server: Server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const state = {
    discoveredIssuer: issuer,
    idToken: {} as Record<string, unknown>,
    signWithForeignKey: false,
    tokenRequests: [] as URLSearchParams[],
  };
  const now = () => Math.floor(Date.now() / 1000);
  /** Claims of an ID token the manager must accept for `nonce`; tests change one of them. */
  const validClaims = (nonce?: string) => ({
    iss: issuer,
    aud: CLIENT_ID,
    sub: 'ada',
    iat: now(),
    exp: now() + 300,
    ...(nonce ? { nonce } : {}),
  });
  const body = async (request: IncomingMessage) => {
    let text = '';
    for await (const chunk of request) text += chunk;
    return new URLSearchParams(text);
  };
  server.on('request', async (request, response) => {
    const json = (status: number, value: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(value));
    };
    if (request.url === '/.well-known/openid-configuration') {
      return json(200, {
        issuer: state.discoveredIssuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        end_session_endpoint: `${issuer}/session/end`,
        id_token_signing_alg_values_supported: ['RS256'],
        authorization_response_iss_parameter_supported: true,
      });
    }
    if (request.url === '/jwks') return json(200, { keys: [jwk] });
    if (request.url === '/token' && request.method === 'POST') {
      state.tokenRequests.push(await body(request));
      const idToken = await new SignJWT(state.idToken)
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .sign(state.signWithForeignKey ? foreignKey.privateKey : key.privateKey);
      return json(200, {
        access_token: jwt({ sub: 'ada' }),
        token_type: 'Bearer',
        expires_in: 20,
        refresh_token: 'r2',
        id_token: idToken,
      });
    }
    json(404, { error: 'not_found' });
  });
  return {
    issuer,
    state,
    validClaims,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

describe('signing in (oauth4webapi against a loopback provider)', () => {
  let idp: Awaited<ReturnType<typeof startProvider>>;
  let provider: OidcProvider;
  let pending: PendingSignIn;
  const callback = (parameters: Record<string, string>) =>
    new URL(`${REDIRECT_URI}?${new URLSearchParams(parameters)}`);
  /** The provider's redirect back for the pending sign-in. */
  const answer = () => callback({ code: 'the-code', state: pending.state, iss: idp.issuer });
  const refusal = async (promise: Promise<unknown>, expected: RegExp) => {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error, 'refused');
    assert.match(describeFailure(error), expected);
  };

  before(async () => {
    idp = await startProvider();
    provider = await discover(idp.issuer, CLIENT_ID);
  });
  after(() => idp.close());
  beforeEach(async () => {
    idp.state.signWithForeignKey = false;
    idp.state.tokenRequests.length = 0;
    pending = (await authorizationRequest(provider, REDIRECT_URI)).pending;
    idp.state.idToken = idp.validClaims(pending.nonce);
  });

  it('sends the browser to the authorization endpoint with PKCE S256, state and nonce', async () => {
    const request = await authorizationRequest(provider, REDIRECT_URI);
    const url = new URL(request.url);
    assert.equal(`${url.origin}${url.pathname}`, `${idp.issuer}/auth`);
    const parameters = Object.fromEntries(url.searchParams);
    assert.deepEqual(parameters, {
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      scope: 'openid profile offline_access',
      state: request.pending.state,
      nonce: request.pending.nonce,
      code_challenge_method: 'S256',
      code_challenge: createHash('sha256').update(request.pending.verifier).digest('base64url'),
    });
    for (const value of [request.pending.state, request.pending.nonce, request.pending.verifier])
      assert.match(value, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(request.pending.state, pending.state);
  });

  it('refuses a discovery document that names another issuer', async () => {
    idp.state.discoveredIssuer = 'https://someone-else.example';
    try {
      await assert.rejects(discover(idp.issuer, CLIENT_ID), /issuer/);
    } finally {
      idp.state.discoveredIssuer = idp.issuer;
    }
  });

  it('exchanges the code with the verifier and accepts a valid ID token', async () => {
    const tokens = await exchangeCode(provider, answer(), pending, REDIRECT_URI);
    assert.equal(tokens.refresh_token, 'r2');
    assert.equal(subjectOf(tokens), 'ada');
    const request = idp.state.tokenRequests[0]!;
    assert.equal(request.get('grant_type'), 'authorization_code');
    assert.equal(request.get('code'), 'the-code');
    assert.equal(request.get('code_verifier'), pending.verifier);
    assert.equal(request.get('client_id'), CLIENT_ID);
    assert.equal(request.get('redirect_uri'), REDIRECT_URI);
  });

  it('refuses an ID token from another issuer', async () => {
    idp.state.idToken = { ...idp.validClaims(pending.nonce), iss: 'https://someone-else.example' };
    await refusal(exchangeCode(provider, answer(), pending, REDIRECT_URI), /"iss"/);
  });

  it('refuses an ID token for another audience', async () => {
    idp.state.idToken = { ...idp.validClaims(pending.nonce), aud: 'another-client' };
    await refusal(exchangeCode(provider, answer(), pending, REDIRECT_URI), /"aud"/);
  });

  it('refuses an expired ID token', async () => {
    const now = Math.floor(Date.now() / 1000);
    idp.state.idToken = { ...idp.validClaims(pending.nonce), iat: now - 600, exp: now - 120 };
    await refusal(exchangeCode(provider, answer(), pending, REDIRECT_URI), /"exp"/);
  });

  it('refuses an ID token of another sign-in (nonce)', async () => {
    idp.state.idToken = idp.validClaims('a-nonce-of-another-sign-in');
    await refusal(exchangeCode(provider, answer(), pending, REDIRECT_URI), /"nonce"/);
  });

  it('refuses an ID token signed by a key the provider does not publish', async () => {
    idp.state.signWithForeignKey = true;
    await refusal(exchangeCode(provider, answer(), pending, REDIRECT_URI), /signature/);
  });

  it("refuses an answer to another sign-in (state), and reports the provider's own refusal", async () => {
    await refusal(
      exchangeCode(provider, callback({ code: 'c', state: 'another-state', iss: idp.issuer }), pending, REDIRECT_URI),
      /"state"/,
    );
    await refusal(
      exchangeCode(
        provider,
        callback({ error: 'access_denied', error_description: 'no', state: pending.state, iss: idp.issuer }),
        pending,
        REDIRECT_URI,
      ),
      /^The identity provider refused \(access_denied: no\)/,
    );
    assert.equal(idp.state.tokenRequests.length, 0, 'no code exchanged');
  });

  it('refreshes, checking the new ID token as on sign-in and that it names the same user', async () => {
    idp.state.idToken = idp.validClaims();
    const tokens = await refreshTokens(provider, 'r1', 'ada');
    assert.equal(subjectOf(tokens), 'ada');
    assert.equal(idp.state.tokenRequests[0]!.get('grant_type'), 'refresh_token');
    assert.equal(idp.state.tokenRequests[0]!.get('refresh_token'), 'r1');

    idp.state.idToken = { ...idp.validClaims(), aud: 'another-client' };
    await refusal(refreshTokens(provider, 'r1', 'ada'), /"aud"/);
    idp.state.idToken = { ...idp.validClaims(), sub: 'mallory' };
    await refusal(refreshTokens(provider, 'r1', 'ada'), /another user/);
  });

  it("ends the provider's session with the ID token as hint", () => {
    const url = new URL(endSessionUrl(provider, 'the-id-token', 'http://manager.test/manager/signed-out')!);
    assert.equal(`${url.origin}${url.pathname}`, `${idp.issuer}/session/end`);
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      id_token_hint: 'the-id-token',
      client_id: CLIENT_ID,
      post_logout_redirect_uri: 'http://manager.test/manager/signed-out',
    });
  });
});

describe('tokens and roles', () => {
  it('reads roles and the principal where the service reads them', () => {
    const claims = jwtClaims(
      jwt({
        sub: 's1',
        preferred_username: 'ada',
        realm_access: { roles: ['svc-viewer'] },
        resource_access: { svc: { roles: ['svc-editor'] }, other: { roles: ['svc-admin'] } },
        roles: ['svc-user', 7],
      }),
    );
    assert.deepEqual(rolesOf(claims, 'svc'), ['svc-viewer', 'svc-editor', 'svc-user']);
    assert.equal(principalOf(claims), 'ada');
    assert.equal(principalOf({ sub: 's1' }), 's1');
    assert.equal(jwtClaims('opaque-token'), undefined);
    const none = { canWrite: false, canConverse: false, isAdmin: false, canApprove: false };
    assert.deepEqual(permissionsOf(['svc-viewer']), none);
    assert.deepEqual(permissionsOf(['svc-editor']), { ...none, canWrite: true, canConverse: true, canApprove: true });
    assert.deepEqual(permissionsOf(['svc-admin']), {
      canWrite: true,
      canConverse: true,
      isAdmin: true,
      canApprove: true,
    });
    assert.deepEqual(permissionsOf(['svc-user']), { ...none, canConverse: true });
    assert.deepEqual(permissionsOf(['svc-approver']), { ...none, canApprove: true });
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
