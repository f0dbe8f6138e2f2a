import type { VNode } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { AuditPage } from '../audit/AuditPage';
import { ApiKeysPage } from '../keys/ApiKeysPage';
import { DomainsPage } from '../domains/DomainsPage';
import { CreateLinkPage } from '../links/CreateLinkPage';
import { EditLinkPage } from '../links/EditLinkPage';
import { LinksPage } from '../links/LinksPage';
import { AllLinksPage } from '../moderation/AllLinksPage';
import { appPath, matchPath, safeReturnPath, useLocation } from '../router/router';
import { useSession } from '../session/session';
import { SecurityPage } from '../security/SecurityPage';
import { SignInPage } from '../session/SignInPage';
import { SignUpPage } from '../session/SignUpPage';
import { ErrorState, Loading } from '../ui/States';
import { UsersPage } from '../users/UsersPage';
import { Layout } from './Layout';
import { lazyScreen } from './lazy-screen';
import { NotFoundPage } from './NotFoundPage';
import { Redirect } from './Redirect';

// The chart library comes with this screen only.
const LinkStatsPage = lazyScreen(() => import('../stats/LinkStatsPage'), 'analytics');
const AccountPage = lazyScreen(() => import('../stats/AccountPage'), 'account overview');
const RulesPage = lazyScreen(() => import('../links/rules/RulesPage'), 'rules editor');
const WebhooksPage = lazyScreen(() => import('../webhooks/WebhooksPage'), 'webhooks');
const WebhookPage = lazyScreen(() => import('../webhooks/WebhookPage'), 'webhook');

interface Route {
  pattern: string;
  render: (params: Record<string, string>) => VNode;
}

/**
 * The signed-in screens, by path under /app. A new screen is one entry here (its component loaded on demand
 * where it is large), without touching the others.
 */
const ROUTES: Route[] = [
  { pattern: '/', render: () => <Redirect to={appPath('/links')} /> },
  { pattern: '/links', render: () => <LinksPage /> },
  { pattern: '/links/new', render: () => <CreateLinkPage /> },
  { pattern: '/links/:code/edit', render: (p) => <EditLinkPage code={p.code!} /> },
  { pattern: '/links/:code/stats', render: (p) => <LinkStatsPage code={p.code!} /> },
  { pattern: '/links/:code/rules', render: (p) => <RulesPage code={p.code!} /> },
  { pattern: '/account', render: () => <AccountPage /> },
  { pattern: '/api-keys', render: () => <ApiKeysPage /> },
  { pattern: '/domains', render: () => <DomainsPage /> },
  { pattern: '/all-links', render: () => <AllLinksPage /> },
  { pattern: '/users', render: () => <UsersPage /> },
  { pattern: '/webhooks', render: () => <WebhooksPage /> },
  { pattern: '/webhooks/:id', render: (p) => <WebhookPage id={p.id!} /> },
  { pattern: '/security', render: () => <SecurityPage /> },
  { pattern: '/audit', render: () => <AuditPage /> },
];

const PUBLIC: Record<string, () => VNode> = {
  '/sign-in': () => <SignInPage />,
  '/sign-up': () => <SignUpPage />,
};

function resolve(path: string): VNode {
  for (const route of ROUTES) {
    const params = matchPath(route.pattern, path);
    if (params) return route.render(params);
  }
  return <NotFoundPage />;
}

export function App() {
  const session = useSession();
  const location = useLocation();
  const { path } = location;

  // After a change of screen, focus moves to its content, so keyboard and screen-reader users start there.
  const previousPath = useRef(path);
  useEffect(() => {
    if (previousPath.current === path) return;
    previousPath.current = path;
    document.getElementById('main')?.focus();
  }, [path]);

  if (session.state === 'checking') return <Loading what="your session" />;
  if (session.state === 'unreachable' && session.problem)
    return <ErrorState problem={session.problem} onRetry={session.retry} />;
  const publicScreen = PUBLIC[path];
  // Signed in on a public screen (just now, or by a bookmark): on to where the user was going.
  if (publicScreen)
    return session.state === 'signed-in' ? (
      <Redirect to={safeReturnPath(location.query.get('next'))} />
    ) : (
      publicScreen()
    );
  if (session.state === 'signed-out') {
    const here = appPath(path) + (location.query.size ? `?${location.query.toString()}` : '');
    return <Redirect to={`${appPath('/sign-in')}?next=${encodeURIComponent(here)}`} />;
  }
  return <Layout>{resolve(path)}</Layout>;
}
