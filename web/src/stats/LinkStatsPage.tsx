import { outcome } from '../api/outcome';
import { linkName } from '../links/link-names';
import { useApiData } from '../api/use-api-data';
import { useApi } from '../session/session';
import { ErrorState, Loading } from '../ui/States';
import { useTitle } from '../ui/use-title';
import { LinkHeader } from './LinkHeader';
import { LiveClicks } from './LiveClicks';
import { PeriodPicker } from './PeriodPicker';
import { StatsBody } from './StatsBody';
import { RoutingPanels } from './StatsPanels';
import { useStatsView } from './use-stats-view';

/**
 * A link's analytics (GET /links/{code}/stats), laid out like Plausible's dashboard: the figures, the date
 * range, interval and time zone every panel follows, clicks over time on top with bots apart, then the
 * ranked panels. The view lives in the URL, so it can be shared. Loaded on demand (its own chunk, with uPlot).
 */
export default function LinkStatsPage({ code }: { code: string }) {
  const api = useApi();
  const { view, query, key } = useStatsView();
  const link = useApiData(() => outcome(api.GET('/api/v1/links/{code}', { params: { path: { code } } })), [code]);
  // Named as people know it (its title or first alias) once it is loaded; its code until then.
  const name = link.state === 'ready' ? linkName(link.data) : { text: code, isCode: true };
  useTitle(`Analytics of ${name.text}`);
  const stats = useApiData(
    () => outcome(api.GET('/api/v1/links/{code}/stats', { params: { path: { code }, query } })),
    [code, key],
  );

  if (link.state === 'error') return <ErrorState problem={link.problem} onRetry={link.reload} />;
  return (
    <>
      <h1>Analytics of {name.isCode ? <span class="code">{name.text}</span> : name.text}</h1>
      {link.state === 'loading' ? <Loading what="the link" /> : <LinkHeader link={link.data} />}
      {link.state === 'ready' && <LiveClicks linkId={link.data.id} />}
      <PeriodPicker scope="link" view={view} problem={stats.state === 'error' ? stats.problem : null} />
      {stats.state === 'loading' && <Loading what="analytics" />}
      {stats.state === 'error' && <ErrorState problem={stats.problem} onRetry={stats.reload} />}
      {stats.state === 'ready' && (
        <StatsBody stats={stats.data} scope="link" updating={stats.updating}>
          <RoutingPanels stats={stats.data} />
        </StatsBody>
      )}
    </>
  );
}
