import type { LinkStats } from '../api/client';
import { DateTime } from '../ui/DateTime';
import { formatCount } from '../ui/format';

/** The headline figures: the window's clicks, then the link's lifetime totals (SPEC §6). */
export function StatsSummary({ stats, windowClicks }: { stats: LinkStats; windowClicks: number }) {
  return (
    <dl class="summary">
      <div>
        <dt>Clicks in this period</dt>
        <dd data-testid="window-clicks">{formatCount(windowClicks)}</dd>
      </div>
      <div>
        <dt>Clicks since created</dt>
        <dd>{formatCount(stats.total_clicks)}</dd>
      </div>
      <div>
        <dt>Unique visitors</dt>
        <dd>{formatCount(stats.unique_visitors)}</dd>
      </div>
      <div>
        <dt>Last click</dt>
        <dd>{stats.last_click_at ? <DateTime iso={stats.last_click_at} /> : 'None yet'}</dd>
      </div>
    </dl>
  );
}
