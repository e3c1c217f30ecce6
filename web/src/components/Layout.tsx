/**
 * The frame: a skip link, the signed-in user with a sign-out button, the navigation (a menu button on narrow
 * screens) and the main region. Operations a role cannot use are not offered (import/export needs a writing
 * role, secrets and logs the admin role).
 */
import { type ReactNode, useState } from 'react';
import { useResourceKinds } from '../api/resources.ts';
import { signOut, useAuth } from '../auth.tsx';
import { t } from '../i18n/index.ts';
import type { Permissions } from '../lib/oidc.ts';
import { BASE, Link, useLocation } from '../router.tsx';

const sections: readonly { to: string; label: string }[] = [
  { to: BASE, label: t('nav.dashboard') },
  { to: `${BASE}/agents`, label: t('nav.agents') },
  { to: `${BASE}/chat`, label: t('nav.chat') },
  { to: `${BASE}/conversations`, label: t('nav.conversations') },
];

const operations: readonly { to: string; label: string; allowed: (p: Permissions) => boolean }[] = [
  { to: `${BASE}/backup`, label: t('nav.backup'), allowed: (p) => p.canWrite },
  { to: `${BASE}/secrets`, label: t('nav.secrets'), allowed: (p) => p.isAdmin },
  { to: `${BASE}/inbox`, label: t('nav.inbox'), allowed: (p) => p.canApprove },
  { to: `${BASE}/triggers`, label: t('nav.triggers'), allowed: () => true },
  { to: `${BASE}/channels`, label: t('nav.channels'), allowed: () => true },
  { to: `${BASE}/memory`, label: t('nav.userMemory'), allowed: () => true },
  { to: `${BASE}/logs`, label: t('nav.logs'), allowed: (p) => p.isAdmin },
];

function isCurrent(to: string, pathname: string): boolean {
  if (to === BASE) return pathname === BASE || pathname === '/' || pathname === `${BASE}/`;
  return pathname === to || pathname.startsWith(`${to}/`);
}

export function Layout({ children }: { children: ReactNode }) {
  const { pathname } = useLocation();
  const { status, user, permissions } = useAuth();
  const kinds = useResourceKinds();
  // The (narrow-screen) menu is open on the page where it was opened: navigating anywhere closes it.
  const [menuOpenOn, setMenuOpenOn] = useState<string>();
  const menuOpen = menuOpenOn === pathname;

  const link = (s: { to: string; label: string }) => (
    <li key={s.to}>
      <Link to={s.to} aria-current={isCurrent(s.to, pathname) ? 'page' : undefined}>
        {s.label}
      </Link>
    </li>
  );

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        {t('nav.skip')}
      </a>
      <header className="topbar">
        <Link to={BASE} className="brand">
          {t('app.name')}
        </Link>
        {status === 'signed-in' && (
          <div className="account">
            <span className="account-name" data-testid="signed-in-user">
              {user?.name ?? t('account.signedIn')}
              <span className="account-roles">
                {' '}
                · {user?.roles.length ? user.roles.join(', ') : t('account.noRole')}
              </span>
            </span>
            <button type="button" className="sign-out" onClick={signOut}>
              {t('account.signOut')}
            </button>
          </div>
        )}
        <button
          type="button"
          className="menu-button"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpenOn(menuOpen ? undefined : pathname)}
        >
          {t('nav.menu')}
        </button>
      </header>
      <nav id="nav" aria-label={t('nav.label')} className={menuOpen ? 'open' : ''}>
        <ul>{sections.map(link)}</ul>
        <h2 className="nav-heading">{t('nav.resources')}</h2>
        <ul>{(kinds?.configuration ?? []).map((k) => link({ to: `${BASE}/resources/${k.slug}`, label: k.label }))}</ul>
        <h2 className="nav-heading">{t('nav.operations')}</h2>
        <ul>{operations.filter((o) => o.allowed(permissions)).map(link)}</ul>
        <p className="nav-foot">
          <a href="/q/swagger-ui">{t('nav.apiDocs')}</a>
        </p>
      </nav>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
