import type { LinkStats } from '../api/client';
import { DateTime } from '../ui/DateTime';
import { formatCount } from '../ui/format';

export type SummaryFigures = Pick<
  LinkStats,
  'human_clicks' | 'bot_clicks' | 'unique_visitors' | 'last_click_at' | 'data_fresh_as_of' | 'timeseries'
>;

/**
 * The headline figures: the window's clicks by people and by bots (the sums of its buckets), then the
 * lifetime totals (SPEC §15), each named for what it counts, and up to when clicks are counted.
 */
/**
 * What the API's unique_visitors is on each screen: a link's distinct visitors; over an account, each link's
 * added up (the API keeps no account-wide visitor set), so one person who visited two links counts twice.
 */
const VISITORS = {
  link: { label: 'Unique visitors, all time', note: null },
  account: {
    label: 'Unique visitors per link, added up',
    note: 'Someone who visited two of your links counts once for each.',
  },
} as const;
export type StatsScope = keyof typeof VISITORS;

export function StatsSummary({
  stats,
  scope,
  extra,
}: {
  stats: SummaryFigures;
  scope: StatsScope;
  extra?: { label: string; value: string };
}) {
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
          <dt>Clicks by people in this period</dt>
          <dd data-testid="window-clicks">{formatCount(people)}</dd>
        </div>
        <div>
          <dt>Clicks by bots in this period</dt>
          <dd data-testid="window-bots">{formatCount(bots)}</dd>
        </div>
        <div>
          <dt>Clicks by people, all time</dt>
          <dd data-testid="lifetime-clicks">{formatCount(stats.human_clicks)}</dd>
        </div>
        <div>
          <dt>Clicks by bots, all time</dt>
          <dd data-testid="lifetime-bots">{formatCount(stats.bot_clicks)}</dd>
        </div>
        <div>
          <dt>{VISITORS[scope].label}</dt>
          <dd data-testid="unique-visitors" aria-describedby={VISITORS[scope].note ? 'visitors-note' : undefined}>
            {formatCount(stats.unique_visitors)}
          </dd>
        </div>
        <div>
          <dt>Last click</dt>
          <dd>{stats.last_click_at ? <DateTime iso={stats.last_click_at} /> : 'None yet'}</dd>
        </div>
      </dl>
      {VISITORS[scope].note && (
        <p class="muted fresh" id="visitors-note">
          {VISITORS[scope].note}
        </p>
      )}
      {stats.data_fresh_as_of && (
        <p class="muted fresh">
          Clicks counted up to <DateTime iso={stats.data_fresh_as_of} />; newer ones may still be on their way.
        </p>
      )}
    </>
  );
}
