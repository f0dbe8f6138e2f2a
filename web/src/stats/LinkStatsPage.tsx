import { useMemo } from 'preact/hooks';
import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { useLocation } from '../router/router';
import { useApi } from '../session/session';
import { ErrorState, Loading } from '../ui/States';
import { useTitle } from '../ui/use-title';
import { ClicksChart } from './ClicksChart';
import { ClicksTable } from './ClicksTable';
import { LinkHeader } from './LinkHeader';
import { PeriodPicker } from './PeriodPicker';
import { queryFromView, viewFromQuery } from './stats-query';
import { StatsSummary } from './StatsSummary';
import { TopList } from './TopList';

/**
 * A link's analytics (GET /links/{code}/stats), laid out like Plausible's dashboard: the lifetime figures,
 * the date range every panel follows, clicks over time on top, then the ranked panels side by side. The
 * range and interval live in the URL, so the view can be shared. Loaded on demand (its own chunk, with uPlot).
 */
export default function LinkStatsPage({ code }: { code: string }) {
  useTitle(`Analytics of ${code}`);
  const api = useApi();
  const location = useLocation();
  const search = location.query.toString();
  // "Last 7 days" means up to the moment the view was asked for; it moves only when the URL changes.
  const { view, query } = useMemo(() => {
    const now = Date.now();
    const v = viewFromQuery(location.query, now);
    return { view: v, query: queryFromView(v, now) };
  }, [search]);

  const link = useApiData(() => outcome(api.GET('/api/v1/links/{code}', { params: { path: { code } } })), [code]);
  const stats = useApiData(() => outcome(api.GET('/api/v1/links/{code}/stats', { params: { path: { code }, query } })), [code, search]);
  const windowClicks = stats.state === 'ready' ? stats.data.timeseries.reduce((sum, b) => sum + b.clicks, 0) : 0;

  if (link.state === 'error') return <ErrorState problem={link.problem} onRetry={link.reload} />;
  return (
    <>
      <h1>
        Analytics of <span class="code">{code}</span>
      </h1>
      {link.state === 'loading' ? <Loading what="the link" /> : <LinkHeader link={link.data} />}
      <PeriodPicker view={view} problem={stats.state === 'error' ? stats.problem : null} />
      {stats.state === 'loading' && <Loading what="analytics" />}
      {stats.state === 'error' && <ErrorState problem={stats.problem} onRetry={stats.reload} />}
      {stats.state === 'ready' && (
        <div class="stats" aria-busy={stats.updating}>
          <StatsSummary stats={stats.data} windowClicks={windowClicks} />
          <section class="panel wide" aria-labelledby="clicks-over-time">
            <h2 id="clicks-over-time">Clicks over time</h2>
            <ClicksChart
              timeseries={stats.data.timeseries}
              interval={stats.data.interval}
              label={`Clicks per ${stats.data.interval} from ${stats.data.from} to ${stats.data.to}: ${windowClicks} in all`}
            />
            <ClicksTable timeseries={stats.data.timeseries} interval={stats.data.interval} />
          </section>
          <div class="panels">
            <TopList title="Top referrers" items={stats.data.top_referrers} empty="No referrers in this period." />
            <TopList title="Top user agents" items={stats.data.top_user_agents} empty="No visits in this period." />
          </div>
        </div>
      )}
    </>
  );
}
