import type { LinkStats } from '../api/client';
import { DateTime } from '../ui/DateTime';
import { formatCount } from '../ui/format';

export type SummaryFigures = Pick<LinkStats, 'human_clicks' | 'bot_clicks' | 'unique_visitors' | 'last_click_at' | 'data_fresh_as_of' | 'timeseries'>;

/**
 * The headline figures: the window's clicks by people and by bots (the sums of its buckets), then the
 * lifetime totals (SPEC §15), and up to when clicks are counted.
 */
export function StatsSummary({ stats, extra }: { stats: SummaryFigures; extra?: { label: string; value: string } }) {
  const people = stats.timeseries.reduce((sum, b) => sum + b.clicks, 0);
  const bots = stats.timeseries.reduce((sum, b) => sum + b.bots, 0);
  return (
    <>
      <dl class="summary">
        {extra && (
          <div>
            <dt>{extra.label}</dt>
            <dd>{extra.value}</dd>
          </div>
        )}
        <div>
          <dt>Clicks in this period</dt>
          <dd data-testid="window-clicks">{formatCount(people)}</dd>
        </div>
        <div>
          <dt>Bot clicks in this period</dt>
          <dd data-testid="window-bots">{formatCount(bots)}</dd>
        </div>
        <div>
          <dt>Clicks, all time</dt>
          <dd>{formatCount(stats.human_clicks)}</dd>
        </div>
        <div>
          <dt>Bot clicks, all time</dt>
          <dd>{formatCount(stats.bot_clicks)}</dd>
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
      {stats.data_fresh_as_of && (
        <p class="muted fresh">
          Clicks counted up to <DateTime iso={stats.data_fresh_as_of} />; newer ones may still be on their way.
        </p>
      )}
    </>
  );
}
