import type { ComponentChildren } from 'preact';
import { Link } from '../router/Link';
import { appPath, useLocation } from '../router/router';
import { useSession, useUser } from '../session/session';

interface NavItem {
  href: string;
  label: string;
  /** paths (inside the dashboard) under which this item is the current one */
  prefix: string;
}

function navItems(isAdmin: boolean): NavItem[] {
  const items: NavItem[] = [
    { href: appPath('/links'), label: 'My links', prefix: '/links' },
    { href: appPath('/links/new'), label: 'New link', prefix: '/links/new' },
    { href: appPath('/account'), label: 'Overview', prefix: '/account' },
    { href: appPath('/api-keys'), label: 'API keys', prefix: '/api-keys' },
    { href: appPath('/domains'), label: 'Domains', prefix: '/domains' },
    { href: appPath('/webhooks'), label: 'Webhooks', prefix: '/webhooks' },
    { href: appPath('/security'), label: 'Security', prefix: '/security' },
  ];
  if (isAdmin)
    items.push(
      { href: appPath('/all-links'), label: 'All links', prefix: '/all-links' },
      { href: appPath('/users'), label: 'Users', prefix: '/users' },
      { href: appPath('/audit'), label: 'Audit', prefix: '/audit' },
    );
  return items;
}

/** The frame of every signed-in screen: the navigation, who is signed in, and a pending account's notice. */
export function Layout({ children }: { children: ComponentChildren }) {
  const user = useUser();
  const session = useSession();
  const { path } = useLocation();
  const items = navItems(user.role === 'admin');
  // The most specific item that contains the path is the current one (New link inside My links).
  const current = items
    .filter((i) => path === i.prefix || path.startsWith(`${i.prefix}/`))
    .sort((a, b) => b.prefix.length - a.prefix.length)[0];
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <Link href={appPath('/links')} class="brand">
          Ferry
        </Link>
        <nav aria-label="Main">
          <ul>
            {items.map((i) => (
              <li key={i.href}>
                <Link href={i.href} aria-current={i === current ? 'page' : undefined}>
                  {i.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="account">
          <span class="who" title={user.email}>
            {user.username}
          </span>
          <button type="button" onClick={() => void session.signOut()}>
            Sign out
          </button>
        </div>
      </header>
      {user.status === 'pending' && (
        <p class="notice banner" role="status">
          Your account awaits activation by an admin.
        </p>
      )}
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
