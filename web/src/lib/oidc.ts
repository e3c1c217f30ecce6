/**
 * The pure parts of signing in with OpenID Connect (authorization code flow with PKCE, public client): random
 * values, the S256 code challenge, the authorization URL, reading a JWT's claims, the roles of an access token and
 * when to refresh it. No DOM beyond Web Crypto (also in Node), so it is unit-tested in Node.
 */

/** The provider's discovery document (the members used). */
export interface ProviderMetadata {
  readonly issuer?: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly end_session_endpoint?: string;
}

/** A token endpoint answer. */
export interface TokenResponse {
  readonly access_token: string;
  readonly token_type?: string;
  readonly expires_in?: number;
  readonly refresh_token?: string;
  readonly id_token?: string;
  readonly scope?: string;
}

/** The scopes the manager asks for: an ID token, a username, and a refresh token. */
export const SCOPE = 'openid profile offline_access';

/** Role names of the service (src/security/auth.ts). */
export const ROLES = { admin: 'svc-admin', editor: 'svc-editor', viewer: 'svc-viewer', user: 'svc-user' } as const;

export function base64url(bytes: Uint8Array): string {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A random URL-safe value (state, nonce, PKCE verifier: 32 random bytes = 43 characters). */
export function randomValue(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** The S256 code challenge of a verifier (RFC 7636). Web Crypto needs a secure context (HTTPS or localhost). */
export async function codeChallenge(verifier: string): Promise<string> {
  if (!crypto.subtle) throw new Error('Signing in needs a secure context (HTTPS or localhost) for the PKCE code challenge.');
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}

export interface AuthorizeRequest {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly state: string;
  readonly nonce: string;
  readonly challenge: string;
  readonly scope?: string;
  readonly prompt?: string;
}

export function authorizationUrl(endpoint: string, r: AuthorizeRequest): string {
  const url = new URL(endpoint);
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: r.clientId,
    redirect_uri: r.redirectUri,
    scope: r.scope ?? SCOPE,
    state: r.state,
    nonce: r.nonce,
    code_challenge: r.challenge,
    code_challenge_method: 'S256',
  };
  if (r.prompt) params.prompt = r.prompt;
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}

/** The claims of a JWT (not verified: the service verifies access tokens; the browser only reads them). */
export function jwtClaims(token: string | undefined): Record<string, unknown> | undefined {
  const part = token?.split('.')[1];
  if (!part) return undefined;
  try {
    const text = atob(part.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(part.length / 4) * 4, '='));
    const json = new TextDecoder().decode(Uint8Array.from(text, (c) => c.charCodeAt(0)));
    const claims: unknown = JSON.parse(json);
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims) ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/** The roles of a token's claims, read where the service reads them: realm roles, the client's roles, `roles`. */
export function rolesOf(claims: Record<string, unknown> | undefined, clientId: string): string[] {
  if (!claims) return [];
  const realm = (claims['realm_access'] as { roles?: unknown } | undefined)?.roles;
  const access = claims['resource_access'] as Record<string, { roles?: unknown } | undefined> | undefined;
  const client = access && typeof access === 'object' ? access[clientId]?.roles : undefined;
  return [...new Set([...strings(realm), ...strings(client), ...strings(claims['roles'])])];
}

/** The principal as the service names it: `preferred_username`, else `sub`. */
export function principalOf(claims: Record<string, unknown> | undefined): string | undefined {
  const preferred = claims?.['preferred_username'];
  if (typeof preferred === 'string' && preferred !== '') return preferred;
  return typeof claims?.sub === 'string' ? claims.sub : undefined;
}

/** What the user may do, from their roles (mirrors the access table: src/security/access-policy.ts). */
export interface Permissions {
  /** Create, edit, delete configuration; deploy and undeploy; import, export; triggers. */
  readonly canWrite: boolean;
  /** Start conversations and send messages. */
  readonly canConverse: boolean;
  /** Secrets and logs. */
  readonly isAdmin: boolean;
}

export const EVERYTHING: Permissions = { canWrite: true, canConverse: true, isAdmin: true };

export function permissionsOf(roles: readonly string[]): Permissions {
  const has = (...names: string[]) => names.some((n) => roles.includes(n));
  return {
    canWrite: has(ROLES.admin, ROLES.editor),
    canConverse: has(ROLES.admin, ROLES.editor, ROLES.user),
    isAdmin: has(ROLES.admin),
  };
}

/** When the token expires (epoch ms): `expires_in` of the answer, else the token's `exp`. */
export function expiryOf(response: TokenResponse, now: number): number | undefined {
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
