/**
 * Shown when the service answers 401 (authentication on). For now the user pastes an access token issued by
 * the identity provider; the OIDC redirect flow (authorization code + PKCE, refresh before expiry) belongs to
 * the authentication issue and only needs to call setToken with the token it obtains.
 */
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { setToken, useAuth } from '../../auth.tsx';
import { Field, PageHeader } from '../../components/ui.tsx';

export function SignIn() {
  const { signedIn, signInRequired } = useAuth();
  const queryClient = useQueryClient();
  const [token, setValue] = useState('');
  return (
    <>
      <PageHeader title="Sign in" description="The service requires authentication." />
      {signInRequired && <div className="message warning" role="alert">The service answered 401: {signedIn ? 'your access token was refused or has expired.' : 'please sign in.'}</div>}
      <form
        className="panel narrow-form"
        onSubmit={(e) => {
          e.preventDefault();
          setToken(token);
          void queryClient.invalidateQueries();
        }}
      >
        <Field label="Access token" value={token} onChange={setValue} type="password" autoComplete="off" hint="A bearer token from your identity provider (OIDC). It is kept for this browser tab only." />
        <div className="form-actions">
          <button type="submit" className="primary" disabled={token.trim() === ''}>Sign in</button>
          {signedIn && <button type="button" onClick={() => setToken(undefined)}>Sign out</button>}
        </div>
      </form>
    </>
  );
}
