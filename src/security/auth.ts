import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';

/**
 * Authentication as an OAuth 2 resource server (SPEC "Authentication" 1-3, DESIGN §4.18): a bearer access token
 * (a JWT) is verified against the identity provider's published keys. The key set's address is discovered once
 * from `<issuer>/.well-known/openid-configuration` (`jwks_uri`); `createRemoteJWKSet` fetches it, caches it and
 * fetches it again when a token names a key it does not know (key rotation).
 *
 * Checked: the signature, `iss` = the configured issuer, the audience (`aud` holds the client id, or `azp` is the
 * client id), `exp` (and `nbf`). The principal is `preferred_username`, else `sub`. Roles are read from
 * `realm_access.roles`, `resource_access.<client id>.roles` and a plain `roles` claim; workspace groups from a
 * `groups` claim (Keycloak's leading `/` dropped).
 *
 * Nothing here ever logs or returns the token; error messages name what failed, never the token's content.
 */

export const ROLES = {
  admin: 'svc-admin',
  editor: 'svc-editor',
  viewer: 'svc-viewer',
  user: 'svc-user',
  /** Decides on turns that wait for a person (human in the loop). */
  approver: 'svc-approver',
} as const;

export interface Principal {
  /** `preferred_username`, else `sub`: the value stamped as owner and used as conversation userId. */
  readonly name: string;
  readonly roles: ReadonlySet<string>;
  /** Group names from the token's `groups` claim (workspaces). */
  readonly groups: readonly string[];
  /** The bearer token as received, for caller-identity HTTP calls only. Never log it. */
  readonly token: string;
}

export class AuthenticationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthenticationError';
  }
}

export interface AuthenticatorOptions {
  /** `svc.oidc.auth-server-url`. */
  readonly issuer: string;
  /** `svc.oidc.client-id`: the audience tokens must be issued for. */
  readonly audience: string;
  /** `svc.oidc.clock-tolerance-seconds`. */
  readonly clockToleranceSeconds: number;
}

export interface Authenticator {
  /** Verifies a bearer token; throws `AuthenticationError` with a safe message. */
  authenticate(token: string): Promise<Principal>;
}

const stringList = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/** The roles a token carries (realm roles, the service client's roles, a plain `roles` claim). */
export function rolesOf(payload: JWTPayload, clientId: string): Set<string> {
  const realm = (payload.realm_access as { roles?: unknown } | undefined)?.roles;
  const resourceAccess = payload.resource_access as Record<string, { roles?: unknown } | undefined> | undefined;
  const client = resourceAccess && typeof resourceAccess === 'object' ? resourceAccess[clientId]?.roles : undefined;
  return new Set([...stringList(realm), ...stringList(client), ...stringList(payload.roles)]);
}

export function principalOf(payload: JWTPayload, clientId: string, token: string): Principal {
  const preferred = payload.preferred_username;
  const name = typeof preferred === 'string' && preferred !== '' ? preferred : payload.sub;
  if (typeof name !== 'string' || name === '')
    throw new AuthenticationError('The token names no user (neither preferred_username nor sub).');
  const groups = stringList(payload.groups)
    .map((group) => group.replace(/^\/+/, ''))
    .filter((group) => group !== '');
  return { name, roles: rolesOf(payload, clientId), groups, token };
}

function audienceMatches(payload: JWTPayload, audience: string): boolean {
  const aud = payload.aud;
  if (aud === audience || (Array.isArray(aud) && aud.includes(audience))) return true;
  return payload.azp === audience;
}

function describe(error: unknown): string {
  if (error instanceof AuthenticationError) return error.message;
  if (error instanceof joseErrors.JWTExpired) return 'The token has expired.';
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `The token's ${error.claim} claim is not valid.`;
  if (error instanceof joseErrors.JWSSignatureVerificationFailed || error instanceof joseErrors.JWKSNoMatchingKey) {
    return 'The token is not signed by a key of the identity provider.';
  }
  if (
    error instanceof joseErrors.JWKSTimeout ||
    (error instanceof joseErrors.JOSEError && error.code === 'ERR_JOSE_GENERIC')
  ) {
    return 'The keys of the identity provider could not be read.';
  }
  return 'The token is not a valid access token.';
}

export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const issuer = options.issuer.replace(/\/+$/, '');
  const { audience } = options;
  let keys: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;

  const discover = async () => {
    const response = await fetch(`${issuer}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok)
      throw new AuthenticationError(
        `The identity provider's configuration could not be read (status ${response.status}).`,
      );
    const configuration = (await response.json()) as { jwks_uri?: unknown };
    if (typeof configuration.jwks_uri !== 'string')
      throw new AuthenticationError("The identity provider's configuration names no jwks_uri.");
    return createRemoteJWKSet(new URL(configuration.jwks_uri));
  };
  const keySet = () => {
    // A failed discovery is tried again by the next request (the provider may start after the service).
    keys ??= discover().catch((error: unknown) => {
      keys = undefined;
      throw error instanceof AuthenticationError
        ? error
        : new AuthenticationError('The identity provider could not be reached.');
    });
    return keys;
  };

  return {
    async authenticate(token) {
      try {
        const jwks = await keySet();
        // The issuer may be configured with or without a trailing slash; the token's must match either form.
        const { payload } = await jwtVerify(token, jwks, {
          issuer: [issuer, `${issuer}/`],
          clockTolerance: options.clockToleranceSeconds,
          requiredClaims: ['exp'],
        });
        if (!audienceMatches(payload, audience))
          throw new AuthenticationError(`The token is not issued for this service (audience ${audience}).`);
        return principalOf(payload, audience, token);
      } catch (error) {
        throw new AuthenticationError(describe(error));
      }
    },
  };
}

/** The token of an `Authorization: Bearer <token>` header; undefined when there is none or it is not a bearer token. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer[ \t]+([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i.exec(header);
  return match?.[1];
}
