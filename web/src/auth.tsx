/**
 * Authentication state for the API client. With authentication off (the default) no token is needed. When the
 * service answers 401, the app shows the sign-in screen; the token given there is attached as a bearer token.
 * The full OIDC redirect flow (authorization code + PKCE against the identity provider, refresh before expiry)
 * is left for the authentication issue: it only needs to call `setToken` with the access token it obtains.
 */
import { createContext, useContext, useMemo, useSyncExternalStore, type ReactNode } from 'react';
import { createApiClient } from './api/client.ts';
import { endpoints, type Api } from './api/endpoints.ts';

const KEY = 'manager.accessToken';
let token: string | undefined = sessionStorage.getItem(KEY) ?? undefined;
let signInRequired = false;
const listeners = new Set<() => void>();
const emit = () => listeners.forEach((l) => l());

export function setToken(value: string | undefined): void {
  token = value && value.trim() !== '' ? value.trim() : undefined;
  if (token) sessionStorage.setItem(KEY, token);
  else sessionStorage.removeItem(KEY);
  signInRequired = false;
  emit();
}

function requireSignIn(): void {
  if (!signInRequired) {
    signInRequired = true;
    emit();
  }
}

interface AuthState {
  readonly api: Api;
  readonly signedIn: boolean;
  readonly signInRequired: boolean;
}

const AuthContext = createContext<AuthState | undefined>(undefined);

const client = createApiClient({ getToken: () => token, onUnauthorized: requireSignIn });
const api = endpoints(client);

export function AuthProvider({ children }: { children: ReactNode }) {
  const state = useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => `${token ?? ''}|${signInRequired}`,
  );
  const value = useMemo<AuthState>(() => ({ api, signedIn: token !== undefined, signInRequired }), [state]);
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
