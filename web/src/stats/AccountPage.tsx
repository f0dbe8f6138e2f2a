import type { UserStats } from '../api/client';
import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { Link } from '../router/Link';
import { appPath } from '../router/router';
import { useApi, useUser } from '../session/session';
import { formatCount } from '../ui/format';
import { ErrorState, Loading } from '../ui/States';
import { useTitle } from '../ui/use-title';
import { PeriodPicker } from './PeriodPicker';
import { StatsBody } from './StatsBody';
import { TopList } from './TopList';
import { useStatsView } from './use-stats-view';

/**
 * The account overview (GET /users/me/stats): the same figures, chart and panels as a link's analytics,
 * over all of the user's links, plus their top links (each leading to its own analytics). Same URL keys.
 */
export default function AccountPage() {
  useTitle('Account overview');
  const api = useApi();
  const user = useUser();
  const { view, query, key } = useStatsView();
  const stats = useApiData(
    () => outcome(api.GET('/api/v1/users/{id}/stats', { params: { path: { id: 'me' }, query } })),
    [key],
  );
  return (
    <>
      <h1>Account overview</h1>
      <p class="muted">
        {user.username} · {user.email} · {user.role} · {user.status}
      </p>
      <PeriodPicker scope="account" view={view} problem={stats.state === 'error' ? stats.problem : null} />
      {stats.state === 'loading' && <Loading what="your analytics" />}
      {stats.state === 'error' && <ErrorState problem={stats.problem} onRetry={stats.reload} />}
      {stats.state === 'ready' && (
        <StatsBody
          stats={stats.data}
          scope="account"
          updating={stats.updating}
          extra={{ label: 'Links', value: formatCount(stats.data.links) }}
        >
          <TopLinks stats={stats.data} />
        </StatsBody>
      )}
    </>
  );
}

function TopLinks({ stats }: { stats: UserStats }) {
  const items = stats.top_links.map((l) => ({ value: l.short_code, clicks: l.clicks }));
  return (
    <div class="panels">
      <TopList
        title="Top links"
        items={items}
        empty={stats.links === 0 ? 'You have no links yet.' : 'No clicks on your links in this period.'}
        show={(code) => (
          <Link href={appPath(`/links/${encodeURIComponent(code)}/stats`)} aria-label={`Analytics of ${code}`}>
            {code}
          </Link>
        )}
      />
    </div>
  );
}
