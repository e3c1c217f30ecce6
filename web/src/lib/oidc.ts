/**
 * Signing in with OpenID Connect as a public client (authorization code flow with PKCE), through `oauth4webapi`:
 * discovery, the authorization request, the code exchange and the refresh with the ID token checked in full
 * (signature against the provider's JWKS, `iss`, `aud`, `azp`, `exp`, `iat`, and `nonce` on sign-in), and the
 * end-session URL. Then the pure parts: reading a token's claims, its roles, and when to refresh it. No DOM beyond
 * fetch and Web Crypto (both also in Node), so it is unit-tested in Node against a loopback provider.
 */
import { t } from '../i18n/index.ts';
import * as oauth from 'oauth4webapi';

/** The scopes the manager asks for: an ID token, a username, and a refresh token. */
export const SCOPE = 'openid profile offline_access';

/** Role names of the service (src/security/auth.ts). */
export const ROLES = {
  admin: 'svc-admin',
  editor: 'svc-editor',
  viewer: 'svc-viewer',
  user: 'svc-user',
  approver: 'svc-approver',
} as const;

/** A discovered provider and the manager as its client. */
export interface OidcProvider {
  readonly server: oauth.AuthorizationServer;
  readonly client: oauth.Client;
  /** For every request to the provider: whether plain HTTP is allowed, and the cache of its signing keys. */
  readonly requestOptions: Pick<oauth.HttpRequestOptions<'GET'>, typeof oauth.allowInsecureRequests> &
    oauth.JWKSCacheOptions;
}

/** What a sign-in keeps across the redirect to the provider. */
export interface PendingSignIn {
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
}

export type Tokens = oauth.TokenEndpointResponse;

/** Reads the provider's discovery document; its `issuer` must be the configured one. */
export async function discover(issuer: string, clientId: string): Promise<OidcProvider> {
  const issuerUrl = new URL(issuer);
  const requestOptions = {
    // oauth4webapi refuses plain HTTP unless told; an http issuer is the operator's choice (a local provider),
    // and a manager served over HTTPS cannot reach one anyway (mixed content).
    [oauth.allowInsecureRequests]: issuerUrl.protocol === 'http:',
    [oauth.jwksCache]: {},
  };
  const server = await oauth.processDiscoveryResponse(
    issuerUrl,
    await oauth.discoveryRequest(issuerUrl, requestOptions),
  );
  return { server, client: { client_id: clientId }, requestOptions };
}

/** The authorization URL (code flow, PKCE S256, state, nonce) and what to keep until the provider answers. */
export async function authorizationRequest(
  provider: OidcProvider,
  redirectUri: string,
): Promise<{ url: string; pending: PendingSignIn }> {
  if (!crypto.subtle) throw new Error(t('oidc.signingInNeedsA'));
  if (!provider.server.authorization_endpoint) throw new Error(t('oidc.theIdentityProviderNames'));
  const pending: PendingSignIn = {
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    verifier: oauth.generateRandomCodeVerifier(),
  };
  const url = new URL(provider.server.authorization_endpoint);
  const parameters = {
    response_type: 'code',
    client_id: provider.client.client_id,
    redirect_uri: redirectUri,
    scope: SCOPE,
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(pending.verifier),
    code_challenge_method: 'S256',
  };
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
  return { url: url.toString(), pending };
}

/**
 * The provider's redirect back (`callbackUrl`): checks the state (and the `iss` parameter where the provider sends
 * one), exchanges the code with the PKCE verifier and checks the ID token, which must answer this sign-in's nonce.
 */
export async function exchangeCode(
  provider: OidcProvider,
  callbackUrl: URL,
  pending: PendingSignIn,
  redirectUri: string,
): Promise<Tokens> {
  const { server, client, requestOptions } = provider;
  const parameters = oauth.validateAuthResponse(server, client, callbackUrl, pending.state);
  const response = await oauth.authorizationCodeGrantRequest(
    server,
    client,
    oauth.None(),
    parameters,
    redirectUri,
    pending.verifier,
    requestOptions,
  );
  const tokens = await oauth.processAuthorizationCodeResponse(server, client, response, {
    expectedNonce: pending.nonce,
    requireIdToken: true,
  });
  await oauth.validateApplicationLevelSignature(server, response, requestOptions);
  return tokens;
}

/** New tokens for a refresh token; an ID token in the answer is checked as on sign-in and must name the same user. */
export async function refreshTokens(
  provider: OidcProvider,
  refreshToken: string,
  subject: string | undefined,
): Promise<Tokens> {
  const { server, client, requestOptions } = provider;
  const response = await oauth.refreshTokenGrantRequest(server, client, oauth.None(), refreshToken, requestOptions);
  const tokens = await oauth.processRefreshTokenResponse(server, client, response);
  const claims = oauth.getValidatedIdTokenClaims(tokens);
  if (claims) {
    await oauth.validateApplicationLevelSignature(server, response, requestOptions);
    if (subject !== undefined && claims.sub !== subject) throw new Error(t('oidc.theRefreshedIdToken'));
  }
  return tokens;
}

/** The subject of the ID token of a sign-in or refresh answer (validated by `exchangeCode`/`refreshTokens`). */
export function subjectOf(tokens: Tokens): string | undefined {
  return oauth.getValidatedIdTokenClaims(tokens)?.sub;
}

/** Where to end the provider's session (RP-initiated logout), when it has an end-session endpoint. */
export function endSessionUrl(
  provider: OidcProvider,
  idToken: string | undefined,
  postLogoutRedirectUri: string,
): string | undefined {
  if (!provider.server.end_session_endpoint) return undefined;
  const url = new URL(provider.server.end_session_endpoint);
  if (idToken) url.searchParams.set('id_token_hint', idToken);
  url.searchParams.set('client_id', provider.client.client_id);
  url.searchParams.set('post_logout_redirect_uri', postLogoutRedirectUri);
  return url.toString();
}

/** A sentence for a failed protocol step: the provider's own error where it gave one. */
export function describeFailure(error: unknown): string {
  if (error instanceof oauth.ResponseBodyError || error instanceof oauth.AuthorizationResponseError) {
    return t('oidc.theIdentityProviderRefused', {
      error: error.error,
      value: error.error_description ? `: ${error.error_description}` : '',
    });
  }
  return t('oidc.signingInFailed', { value: error instanceof Error ? error.message : String(error) });
}

/** The claims of a JWT (not verified: the service verifies access tokens; the browser only reads them). */
export function jwtClaims(token: string | undefined): Record<string, unknown> | undefined {
  const part = token?.split('.')[1];
  if (!part) return undefined;
  try {
    const text = atob(
      part
        .replace(/-/g, '+')
        .replace(/_/g, '/')
        .padEnd(Math.ceil(part.length / 4) * 4, '='),
    );
    const json = new TextDecoder().decode(Uint8Array.from(text, (c) => c.charCodeAt(0)));
    const claims: unknown = JSON.parse(json);
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims)
      ? (claims as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/** The roles of a token's claims, read where the service reads them: realm roles, the client's roles, `roles`. */
export function rolesOf(claims: Record<string, unknown> | undefined, clientId: string): string[] {
  if (!claims) return [];
  const realm = (claims.realm_access as { roles?: unknown } | undefined)?.roles;
  const access = claims.resource_access as Record<string, { roles?: unknown } | undefined> | undefined;
  const client = access && typeof access === 'object' ? access[clientId]?.roles : undefined;
  return [...new Set([...strings(realm), ...strings(client), ...strings(claims.roles)])];
}

/** The principal as the service names it: `preferred_username`, else `sub`. */
export function principalOf(claims: Record<string, unknown> | undefined): string | undefined {
  const preferred = claims?.preferred_username;
  if (typeof preferred === 'string' && preferred !== '') return preferred;
  return typeof claims?.sub === 'string' ? claims.sub : undefined;
}

/** What the user may do, from their roles (mirrors the role classes of the routes: the README's access table). */
export interface Permissions {
  /** Create, edit, delete configuration; deploy and undeploy; import, export; triggers. */
  readonly canWrite: boolean;
  /** Start conversations and send messages. */
  readonly canConverse: boolean;
  /** Secrets and logs. */
  readonly isAdmin: boolean;
  /** The inbox of turns waiting for a person (human in the loop). */
  readonly canApprove: boolean;
}

export const EVERYTHING: Permissions = { canWrite: true, canConverse: true, isAdmin: true, canApprove: true };

export function permissionsOf(roles: readonly string[]): Permissions {
  const has = (...names: string[]) => names.some((n) => roles.includes(n));
  return {
    canWrite: has(ROLES.admin, ROLES.editor),
    canConverse: has(ROLES.admin, ROLES.editor, ROLES.user),
    isAdmin: has(ROLES.admin),
    canApprove: has(ROLES.admin, ROLES.editor, ROLES.approver),
  };
}

/** When the token expires (epoch ms): `expires_in` of the answer, else the token's `exp`. */
export function expiryOf(response: Pick<Tokens, 'access_token' | 'expires_in'>, now: number): number | undefined {
  if (typeof response.expires_in === 'number' && response.expires_in > 0) return now + response.expires_in * 1000;
  const exp = jwtClaims(response.access_token)?.exp;
  return typeof exp === 'number' ? exp * 1000 : undefined;
}

/**
 * How long to wait before refreshing a token that expires at `expiresAt`: a quarter of its remaining life before
 * expiry, at most a minute before it (a 5-minute token is refreshed after 4, a 20-second one after 15 seconds).
 */
export function refreshDelay(expiresAt: number, now: number): number {
  const remaining = expiresAt - now;
  return Math.max(0, remaining - Math.min(60_000, remaining / 4));
}
