/**
 * The frame: a skip link, the signed-in user with a sign-out button, the navigation (a menu button on narrow
 * screens) and the main region. Operations a role cannot use are not offered (import/export needs a writing
 * role, secrets and logs the admin role).
 */
import { type ReactNode, useState } from 'react';
import { useResourceKinds } from '../api/resources.ts';
import { signOut, useAuth } from '../auth.tsx';
import type { Permissions } from '../lib/oidc.ts';
import { BASE, Link, useLocation } from '../router.tsx';

const sections: readonly { to: string; label: string }[] = [
  { to: BASE, label: 'Dashboard' },
  { to: `${BASE}/agents`, label: 'Agents' },
  { to: `${BASE}/chat`, label: 'Chat' },
  { to: `${BASE}/conversations`, label: 'Conversations' },
];

const operations: readonly { to: string; label: string; allowed: (p: Permissions) => boolean }[] = [
  { to: `${BASE}/backup`, label: 'Import / Export', allowed: (p) => p.canWrite },
  { to: `${BASE}/secrets`, label: 'Secrets', allowed: (p) => p.isAdmin },
  { to: `${BASE}/inbox`, label: 'Inbox', allowed: (p) => p.canApprove },
  { to: `${BASE}/triggers`, label: 'Triggers', allowed: () => true },
  { to: `${BASE}/channels`, label: 'Channels', allowed: () => true },
  { to: `${BASE}/memory`, label: 'User memory', allowed: () => true },
  { to: `${BASE}/logs`, label: 'Logs', allowed: (p) => p.isAdmin },
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
        Skip to content
      </a>
      <header className="topbar">
        <Link to={BASE} className="brand">
          Agent manager
        </Link>
        {status === 'signed-in' && (
          <div className="account">
            <span className="account-name" data-testid="signed-in-user">
              {user?.name ?? 'Signed in'}
              <span className="account-roles">
                {' '}
                · {user?.roles.length ? user.roles.join(', ') : 'no role of this service'}
              </span>
            </span>
            <button type="button" className="sign-out" onClick={signOut}>
              Sign out
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
          Menu
        </button>
      </header>
      <nav id="nav" aria-label="Main" className={menuOpen ? 'open' : ''}>
        <ul>{sections.map(link)}</ul>
        <h2 className="nav-heading">Resources</h2>
        <ul>{(kinds?.configuration ?? []).map((k) => link({ to: `${BASE}/resources/${k.slug}`, label: k.label }))}</ul>
        <h2 className="nav-heading">Operations</h2>
        <ul>{operations.filter((o) => o.allowed(permissions)).map(link)}</ul>
        <p className="nav-foot">
          <a href="/q/swagger-ui">API documentation</a>
        </p>
      </nav>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
