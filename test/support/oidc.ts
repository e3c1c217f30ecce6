import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
// oidc-provider has no type declarations of its own; the little used here is typed below.
// @ts-expect-error
import Provider from 'oidc-provider';

/**
 * A real OIDC identity provider (`oidc-provider`) on a loopback port, for black-box tests of the resource server.
 *
 * How tokens are issued: every test user is a confidential client of the provider and gets its access token with
 * the `client_credentials` grant. `features.resourceIndicators` makes every access token a JWT (RS256) whose
 * audience is the service's client id (`defaultResource` names the service, so no `resource` parameter is
 * needed), and `extraTokenClaims` adds what a Keycloak-style provider would put in a user's token:
 * `preferred_username`, `realm_access.roles` (or `resource_access.<client>.roles` / a plain `roles` claim, per
 * user) and `groups`. The provider signs with a key generated here, so tests can also sign tokens the provider
 * would not issue (expired ones) with the same key, and tokens with a key nobody trusts.
 *
 * With `{ interactive: true }` the provider also signs people in through a browser (the web manager's authorization
 * code flow with PKCE, `test/browser/sign-in.test.ts`). What oidc-provider 9 offers for that, and what is used:
 * - `features.devInteractions` (on by default in oidc-provider, off here otherwise): its own login form at
 *   `/interaction/<uid>` (inputs `login` and `password`, button "Sign-in"; any password is accepted, the login
 *   becomes the account id) and a consent form ("Continue"). Development only, which is what a test is.
 * - `findAccount(ctx, sub)`: the account of a login; here the login is a test user's name (`ada-admin`,
 *   `vera-viewer`, ...), and the user's roles go into the access token through `extraTokenClaims` (by
 *   `token.accountId`), in the same claim places as the client-credentials tokens.
 * - `loadExistingGrant(ctx)`: called before the consent prompt; answering a grant (created here for the manager,
 *   a first-party client) skips the consent form, as a Keycloak client with "consent required" off does.
 * - `issueRefreshToken`: oidc-provider issues refresh tokens only for `offline_access` with `prompt=consent`;
 *   here every authorization code of a client allowed the `refresh_token` grant gets one (Keycloak's behaviour).
 *   Public clients' refresh tokens are rotated on every use (`rotateRefreshToken` default).
 * - `registerManager(serviceUrl)` adds the manager as a public client (`token_endpoint_auth_method: 'none'`, PKCE
 *   required, which oidc-provider enforces for public clients; S256 is its only method) through the provider's
 *   client adapter, since the manager's redirect URI `<serviceUrl>/manager/callback` is known only once the
 *   service listens. Its client id is the service audience (`svc.oidc.client-id`), so tokens carry `aud` =
 *   `svc-agents`. CORS for the discovery document and the token endpoint comes from oidc-provider
 *   (`clientBasedCORS`: public clients may call from the origins of their redirect URIs).
 * - `features.rpInitiatedLogout` (default on): `end_session_endpoint` with a confirmation form ("Yes, sign me
 *   out"), then back to a registered `post_logout_redirect_uri`.
 * `accessTokenTTL` shortens access tokens (token refresh tests).
 */

export const SERVICE_AUDIENCE = 'svc-agents';
const RESOURCE = 'urn:svc:agents';

export interface TestUser {
  readonly name: string;
  readonly roles: readonly string[];
  /** Where the roles go in the token (default: `realm_access.roles`). */
  readonly roleClaim?: 'realm' | 'client' | 'plain';
  readonly groups?: readonly string[];
}

export const TEST_USERS = {
  admin: { name: 'ada-admin', roles: ['svc-admin'] },
  editor: { name: 'eddie-editor', roles: ['svc-editor'], roleClaim: 'client' },
  viewer: { name: 'vera-viewer', roles: ['svc-viewer'], roleClaim: 'plain' },
  userA: { name: 'alice', roles: ['svc-editor'], groups: ['team-blue'] },
  userB: { name: 'bob', roles: ['svc-editor'], groups: ['team-red'] },
  userC: { name: 'carol', roles: ['svc-editor'], groups: ['team-blue'] },
  chatter: { name: 'chuck-user', roles: ['svc-user'] },
  approver: { name: 'april-approver', roles: ['svc-approver'] },
  nobody: { name: 'nora-no-roles', roles: [] },
} as const satisfies Record<string, TestUser>;

export type TestUserKey = keyof typeof TEST_USERS;

export interface TestIdentityProvider {
  /** The issuer (`svc.oidc.auth-server-url`). */
  readonly issuer: string;
  /** A real access token of the user, issued by the provider (cached per user). */
  token(user: TestUserKey): Promise<string>;
  /** A token signed with the provider's own key but with the given claims (e.g. an `exp` in the past). */
  signWithProviderKey(claims: Record<string, unknown>): Promise<string>;
  /** A token with valid claims of the user, signed by a key the provider does not publish. */
  signWithForeignKey(user: TestUserKey): Promise<string>;
  /**
   * Only with `interactive`: registers the web manager of the service at `serviceUrl` as a public client (client id
   * `SERVICE_AUDIENCE`, redirect URI `<serviceUrl>/manager/callback`, sign-out back to `<serviceUrl>/manager/signed-out`).
   */
  registerManager(serviceUrl: string): Promise<void>;
  close(): Promise<void>;
}

export interface IdentityProviderOptions {
  /** Browser sign-in: dev login form, accounts, consent skipped for the manager, refresh tokens (default false). */
  readonly interactive?: boolean;
  /** Lifetime of access tokens in seconds (default 3600). */
  readonly accessTokenTTL?: number;
}

/** The test user of a login name (the account id of the dev login form). */
function userNamed(name: string | undefined): TestUser | undefined {
  return Object.values(TEST_USERS).find((user) => user.name === name);
}

function roleClaims(user: TestUser): Record<string, unknown> {
  switch (user.roleClaim ?? 'realm') {
    case 'client':
      return { resource_access: { [SERVICE_AUDIENCE]: { roles: [...user.roles] } } };
    case 'plain':
      return { roles: [...user.roles] };
    default:
      return { realm_access: { roles: [...user.roles] } };
  }
}

function userClaims(user: TestUser): Record<string, unknown> {
  return { preferred_username: user.name, ...roleClaims(user), ...(user.groups ? { groups: [...user.groups] } : {}) };
}

/** The little of oidc-provider's context that `loadExistingGrant` uses. */
interface GrantContext {
  oidc: {
    result?: { consent?: { grantId?: string } };
    session: { accountId?: string; grantIdFor(clientId: string): string | undefined };
    client: { clientId: string };
    provider: {
      Grant: { find(id: string): Promise<unknown>; new (init: { clientId: string; accountId: string }): ProviderGrant };
    };
  };
}
interface ProviderGrant {
  addOIDCScope(scope: string): void;
  addResourceScope(resource: string, scope: string): void;
  save(): Promise<string>;
}

export async function startIdentityProvider(options: IdentityProviderOptions = {}): Promise<TestIdentityProvider> {
  const interactive = options.interactive ?? false;
  const accessTokenTTL = options.accessTokenTTL ?? 3600;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' };
  const foreign = await generateKeyPair('RS256');

  const server: Server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const users = Object.fromEntries(
    Object.entries(TEST_USERS).map(([key, user]) => [`client-${key}`, user as TestUser]),
  );
  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    clients: Object.keys(users).map((clientId) => ({
      client_id: clientId,
      client_secret: `secret-of-${clientId}`,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
    })),
    ttl: {
      ClientCredentials: 3600,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
      RefreshToken: 3600,
    },
    cookies: { keys: ['a-cookie-key-of-the-test-provider'] },
    findAccount: async (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: async () => ({ sub, preferred_username: sub }),
    }),
    claims: { openid: ['sub'], profile: ['preferred_username'] },
    clientBasedCORS: (_ctx: unknown, origin: string, client: { clientAuthMethod: string; redirectUris: string[] }) =>
      client.clientAuthMethod === 'none' && client.redirectUris.some((uri) => URL.parse(uri)?.origin === origin),
    issueRefreshToken: async (
      _ctx: unknown,
      client: { grantTypeAllowed(type: string): boolean },
      code: { kind: string },
    ) =>
      client.grantTypeAllowed('refresh_token') && (code.kind === 'AuthorizationCode' || code.kind === 'RefreshToken'),
    loadExistingGrant: async (ctx: GrantContext) => {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      if (ctx.oidc.client.clientId !== SERVICE_AUDIENCE || !ctx.oidc.session.accountId) return undefined;
      // The manager is first-party: its users are not asked for consent.
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope('openid profile offline_access');
      grant.addResourceScope(RESOURCE, 'api');
      await grant.save();
      return grant;
    },
    features: {
      devInteractions: { enabled: interactive },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'api',
          audience: SERVICE_AUDIENCE,
          accessTokenTTL,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: (_ctx: unknown, token: { clientId?: string; accountId?: string }) => {
      const user = token.clientId ? users[token.clientId] : undefined;
      if (user) return userClaims(user);
      if (token.accountId === undefined) return undefined;
      // A person signed in through the login form: the test user of that name, else a user without roles.
      return userClaims(userNamed(token.accountId) ?? { name: token.accountId, roles: [] });
    },
  });
  // The provider logs through its own event emitter; keep tests quiet.
  provider.on('server_error', () => undefined);
  server.on('request', provider.callback());

  const cache = new Map<TestUserKey, string>();
  const token = async (user: TestUserKey): Promise<string> => {
    const cached = cache.get(user);
    if (cached) return cached;
    const clientId = `client-${user}`;
    const response = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${clientId}:secret-of-${clientId}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'api' }).toString(),
    });
    const body = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
    if (!response.ok || !body.access_token)
      throw new Error(`the identity provider refused a token: ${body.error} ${body.error_description}`);
    cache.set(user, body.access_token);
    return body.access_token;
  };

  const sign = (key: Parameters<SignJWT['sign']>[0], kid: string, claims: Record<string, unknown>) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' }).sign(key);

  return {
    issuer,
    token,
    signWithProviderKey: (claims) => sign(privateKey, jwk.kid!, claims),
    async registerManager(serviceUrl) {
      if (!interactive) throw new Error('registerManager needs startIdentityProvider({ interactive: true })');
      const base = serviceUrl.replace(/\/+$/, '');
      await provider.Client.adapter.upsert(SERVICE_AUDIENCE, {
        client_id: SERVICE_AUDIENCE,
        client_name: 'Agent manager',
        application_type: 'web',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [`${base}/manager/callback`],
        post_logout_redirect_uris: [`${base}/manager/signed-out`],
      });
    },
    async signWithForeignKey(user) {
      const now = Math.floor(Date.now() / 1000);
      return sign(foreign.privateKey, jwk.kid!, {
        iss: issuer,
        aud: SERVICE_AUDIENCE,
        sub: user,
        iat: now,
        exp: now + 3600,
        ...userClaims(TEST_USERS[user]),
      });
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
