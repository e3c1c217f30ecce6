/**
 * Signing in (SPEC "Authentication" 4). At start the manager reads `/manager/config.json` (anonymous):
 * - authentication off: nothing to do, every view is shown;
 * - on: the manager is a public OIDC client (no secret in the browser) and uses the authorization code flow with
 *   PKCE (S256). It discovers the provider (`<issuer>/.well-known/openid-configuration`), sends the browser to its
 *   `authorization_endpoint` with `state`, `nonce` and `code_challenge`, and on the way back (`/manager/callback`)
 *   checks `state`, exchanges the code at the `token_endpoint` and checks the ID token in full (signature, `iss`,
 *   `aud`, `exp`, `nonce`). The protocol is `lib/oidc.ts` (oauth4webapi); this module keeps the session.
 *
 * Tokens live in this module's memory only; sessionStorage holds just the pending request (state, nonce, PKCE
 * verifier, where to return) during the redirect. A reload therefore signs in again, which the provider's own
 * session makes a quick round trip without a form. Every API call and the log stream carry the access token;
 * it is refreshed with the refresh token before it expires (a quarter of its life before, at most a minute), and
 * again on demand when a call finds it about to expire or the service answers 401. When refreshing fails (no
 * refresh token, the provider ended the session) the sign-in screen asks to sign in again.
 *
 * Roles come from the access token, read where the service reads them (realm_access.roles,
 * resource_access.<client id>.roles, roles): they decide which controls are shown (`usePermissions`). The
 * service still decides every call; a token the browser cannot read (not a JWT) shows every control.
 * Signing out forgets the tokens and ends the provider's session (`end_session_endpoint`), which sends the
 * browser back to `/manager/signed-out`.
 */
import { t } from './i18n/index.ts';
import { createContext, useContext, useMemo, useSyncExternalStore, type ReactNode } from 'react';
import { createApiClient } from './api/client.ts';
import { endpoints, type Api } from './api/endpoints.ts';
import {
  authorizationRequest,
  describeFailure,
  discover,
  endSessionUrl,
  EVERYTHING,
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
  type Permissions,
  type Tokens,
} from './lib/oidc.ts';
import { BASE, navigate } from './router.tsx';

export const CALLBACK_PATH = `${BASE}/callback`;
export const SIGNED_OUT_PATH = `${BASE}/signed-out`;
const CONFIG_PATH = `${BASE}/config.json`;
const PENDING_KEY = 'manager.signIn';

interface ManagerConfig {
  readonly authEnabled: boolean;
  readonly issuer?: string | null;
  readonly clientId?: string | null;
}

interface Pending extends PendingSignIn {
  readonly returnTo: string;
}

interface Session {
  readonly accessToken: string;
  readonly refreshToken?: string | undefined;
  readonly idToken?: string | undefined;
  /** The ID token's `sub`: a refreshed ID token must name the same user. */
  readonly subject?: string | undefined;
  readonly expiresAt?: number | undefined;
  /** Claims of the access token; undefined when it is not a JWT. */
  readonly claims?: Record<string, unknown> | undefined;
}

/**
 * starting: reading the configuration or completing a sign-in; redirecting: on the way to the provider;
 * off: authentication is off; signed-in; signed-out (by the user); needs-sign-in (a token expired or was refused,
 * or signing in failed: `message` says why).
 */
export type AuthStatus = 'starting' | 'redirecting' | 'off' | 'signed-in' | 'signed-out' | 'needs-sign-in';

export interface AuthSnapshot {
  readonly status: AuthStatus;
  readonly message?: string | undefined;
  /** The principal (preferred_username, else sub) and roles of the signed-in user. */
  readonly user?: { readonly name?: string | undefined; readonly roles: readonly string[] } | undefined;
  readonly permissions: Permissions;
}

let config: ManagerConfig | undefined;
let provider: OidcProvider | undefined;
let session: Session | undefined;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let refreshing: Promise<boolean> | undefined;
let snapshot: AuthSnapshot = { status: 'starting', permissions: EVERYTHING };
const listeners = new Set<() => void>();

function update(status: AuthStatus, message?: string): void {
  const claims = session?.claims;
  const roles = claims ? rolesOf(claims, config?.clientId ?? '') : [];
  snapshot = {
    status,
    message,
    user: status === 'signed-in' ? { name: principalOf(claims), roles } : undefined,
    // Without a readable token (or authentication) nothing is hidden: the service decides.
    permissions: status === 'signed-in' && claims ? permissionsOf(roles) : EVERYTHING,
  };
  for (const notify of listeners) notify();
}

const redirectUri = () => `${window.location.origin}${CALLBACK_PATH}`;

function accept(tokens: Tokens): void {
  const previous = session;
  session = {
    accessToken: tokens.access_token,
    // Refresh tokens may be rotated; a provider that does not rotate answers none, so the old one stays.
    refreshToken: tokens.refresh_token ?? previous?.refreshToken,
    idToken: tokens.id_token ?? previous?.idToken,
    subject: subjectOf(tokens) ?? previous?.subject,
    expiresAt: expiryOf(tokens, Date.now()),
    claims: jwtClaims(tokens.access_token),
  };
  clearTimeout(refreshTimer);
  refreshTimer = undefined;
  if (session.expiresAt !== undefined && session.refreshToken) {
    refreshTimer = setTimeout(() => void refresh(), refreshDelay(session.expiresAt, Date.now()));
  }
  update('signed-in');
}

function forget(): void {
  session = undefined;
  clearTimeout(refreshTimer);
  refreshTimer = undefined;
}

/** Gets a new access token with the refresh token; answers whether it did. One refresh at a time. */
function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    const refreshToken = session?.refreshToken;
    if (!refreshToken || !provider) return false;
    try {
      accept(await refreshTokens(provider, refreshToken, session?.subject));
      return true;
    } catch {
      forget();
      update('needs-sign-in', t('auth.yourSessionHasEnded'));
      return false;
    }
  })().finally(() => {
    refreshing = undefined;
  });
  return refreshing;
}

/** The token for the next call: refreshed first when it expires within 5 seconds. */
async function currentToken(): Promise<string | undefined> {
  if (refreshing) await refreshing;
  if (session?.expiresAt !== undefined && session.refreshToken && session.expiresAt - Date.now() < 5_000)
    await refresh();
  return session?.accessToken;
}

async function unauthorized(sentToken: string | undefined, canRetry: boolean): Promise<boolean> {
  if (canRetry && session) {
    if (sentToken !== undefined && sentToken !== session.accessToken) return true; // refreshed meanwhile
    if (session.refreshToken && (await refresh())) return true;
  }
  if (snapshot.status === 'needs-sign-in') return false;
  forget();
  update(
    'needs-sign-in',
    config?.authEnabled ? t('auth.theServiceDidNot') : t('auth.theServiceRequiresAuthentication'),
  );
  return false;
}

const safeReturn = (path: string | undefined) =>
  path?.startsWith('/') &&
  !path.startsWith('//') &&
  !path.startsWith(CALLBACK_PATH) &&
  !path.startsWith(SIGNED_OUT_PATH)
    ? path
    : BASE;

/** Sends the browser to the identity provider; it comes back to `/manager/callback`. */
export async function signIn(returnTo: string = window.location.pathname + window.location.search): Promise<void> {
  if (!provider) return;
  try {
    const { url, pending } = await authorizationRequest(provider, redirectUri());
    sessionStorage.setItem(
      PENDING_KEY,
      JSON.stringify({ ...pending, returnTo: safeReturn(returnTo) } satisfies Pending),
    );
    update('redirecting');
    window.location.assign(url);
  } catch (error) {
    update('needs-sign-in', (error as Error).message);
  }
}

/** Forgets the tokens and ends the provider's session; the provider sends the browser back to /manager/signed-out. */
export function signOut(): void {
  const url = provider && endSessionUrl(provider, session?.idToken, `${window.location.origin}${SIGNED_OUT_PATH}`);
  forget();
  if (url) {
    update('redirecting');
    window.location.assign(url);
  } else {
    navigate(SIGNED_OUT_PATH, { replace: true });
    update('signed-out');
  }
}

/** The redirect back from the provider: check state, exchange the code, check the ID token, go where the user was. */
async function completeSignIn(activeProvider: OidcProvider): Promise<void> {
  let pending: Pending | undefined;
  try {
    pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? 'null') ?? undefined;
  } catch {
    pending = undefined;
  }
  sessionStorage.removeItem(PENDING_KEY);
  const fail = (message: string) => {
    navigate(SIGNED_OUT_PATH, { replace: true });
    update('needs-sign-in', message);
  };
  if (!pending) return fail(t('auth.theAnswerOfThe'));
  try {
    const tokens = await exchangeCode(activeProvider, new URL(window.location.href), pending, redirectUri());
    navigate(pending.returnTo, { replace: true });
    accept(tokens);
  } catch (error) {
    fail(describeFailure(error));
  }
}

async function start(): Promise<void> {
  try {
    const response = await fetch(CONFIG_PATH, { headers: { accept: 'application/json' } });
    config = response.ok ? ((await response.json()) as ManagerConfig) : { authEnabled: false };
  } catch {
    config = { authEnabled: false };
  }
  if (!config.authEnabled) return update('off');
  if (!config.issuer || !config.clientId) {
    return update('needs-sign-in', t('auth.theServiceRequiresSign'));
  }
  try {
    provider = await discover(config.issuer, config.clientId);
  } catch (error) {
    return update(
      'needs-sign-in',
      t('auth.theIdentityProviderAt', { issuer: config.issuer, message: (error as Error).message }),
    );
  }
  const path = window.location.pathname.replace(/\/+$/, '');
  if (path === CALLBACK_PATH) return completeSignIn(provider);
  if (path === SIGNED_OUT_PATH) return update('signed-out');
  return signIn();
}

void start();

const client = createApiClient({ getToken: currentToken, onUnauthorized: unauthorized });
const api = endpoints(client);

interface AuthState extends AuthSnapshot {
  readonly api: Api;
}

const AuthContext = createContext<AuthState | undefined>(undefined);

export function AuthProvider({ children }: { children: ReactNode }) {
  const current = useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => snapshot,
  );
  const value = useMemo<AuthState>(() => ({ ...current, api }), [current]);
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthState {
  const value = useContext(AuthContext);
  if (!value) throw new Error('useAuth outside AuthProvider');
  return value;
}

export function useApi(): Api {
  return useAuth().api;
}

/** What the signed-in user may do (everything while authentication is off). */
export function usePermissions(): Permissions {
  return useAuth().permissions;
}
