import { useMemo } from 'preact/hooks';
import { useLocation } from '../router/router';
import { queryFromView, viewFromQuery, type StatsQuery, type StatsView } from './stats-query';
import { browserZone } from './zoned-time';

/**
 * The analytics view of the URL and the API query it stands for. "Last 7 days" means up to the moment the
 * view was asked for; it moves only when the URL changes (`key` says when).
 */
export function useStatsView(): { view: StatsView; query: StatsQuery; key: string } {
  const location = useLocation();
  const key = location.query.toString();
  return useMemo(() => {
    const now = Date.now();
    const view = viewFromQuery(location.query, now, browserZone());
    return { view, query: queryFromView(view, now), key };
  }, [key]);
}
