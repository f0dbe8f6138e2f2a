import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { useApi } from '../session/session';
import { ErrorState, Loading } from '../ui/States';
import { useTitle } from '../ui/use-title';
import { LinkHeader } from './LinkHeader';
import { PeriodPicker } from './PeriodPicker';
import { StatsBody } from './StatsBody';
import { useStatsView } from './use-stats-view';

/**
 * A link's analytics (GET /links/{code}/stats), laid out like Plausible's dashboard: the figures, the date
 * range, interval and time zone every panel follows, clicks over time on top with bots apart, then the
 * ranked panels. The view lives in the URL, so it can be shared. Loaded on demand (its own chunk, with uPlot).
 */
export default function LinkStatsPage({ code }: { code: string }) {
  useTitle(`Analytics of ${code}`);
  const api = useApi();
  const { view, query, key } = useStatsView();
  const link = useApiData(() => outcome(api.GET('/api/v1/links/{code}', { params: { path: { code } } })), [code]);
  const stats = useApiData(() => outcome(api.GET('/api/v1/links/{code}/stats', { params: { path: { code }, query } })), [code, key]);

  if (link.state === 'error') return <ErrorState problem={link.problem} onRetry={link.reload} />;
  return (
    <>
      <h1>
        Analytics of <span class="code">{code}</span>
      </h1>
      {link.state === 'loading' ? <Loading what="the link" /> : <LinkHeader link={link.data} />}
      <PeriodPicker scope="link" view={view} problem={stats.state === 'error' ? stats.problem : null} />
      {stats.state === 'loading' && <Loading what="analytics" />}
      {stats.state === 'error' && <ErrorState problem={stats.problem} onRetry={stats.reload} />}
      {stats.state === 'ready' && <StatsBody stats={stats.data} scope="link" updating={stats.updating} />}
    </>
  );
}
