/**
 * Shown while authentication is on and nobody is signed in: after signing out, when signing in failed, or when
 * the session ended (a refresh was refused, the service answered 401). The button starts the provider's sign-in.
 */
import { t } from '../../i18n/index.ts';
import { signIn, useAuth } from '../../auth.tsx';
import { PageHeader } from '../../components/ui.tsx';
import { BASE, useLocation } from '../../router.tsx';

export function SignIn() {
  const { status, message } = useAuth();
  const { pathname, search } = useLocation();
  const signedOut = status === 'signed-out';
  const returnTo = signedOut ? BASE : pathname + (search.toString() ? `?${search.toString()}` : '');
  return (
    <>
      <PageHeader
        title={signedOut ? t('signIn.signedOut') : t('signIn.signIn')}
        description={signedOut ? t('signIn.youAreSignedOut') : t('signIn.theServiceRequiresYou')}
      />
      {message && (
        <div className="message warning" role="alert">
          {message}
        </div>
      )}
      <div className="panel narrow-form">
        <p>{t('signIn.signingInTakesYou')}</p>
        <div className="form-actions">
          <button type="button" className="primary" onClick={() => void signIn(returnTo)}>
            {signedOut ? t('signIn.signIn') : t('signIn.signInAgain')}
          </button>
        </div>
      </div>
    </>
  );
}
