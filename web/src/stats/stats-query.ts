import { oneOf } from '../ui/query-values';

/**
 * The analytics view's state, as it sits in the URL (Plausible's way: `?period=7d`, or `period=custom`
 * with `from` and `to` as whole UTC days, plus `interval`), and the API query it stands for. A shared URL
 * shows the same window; a hand-edited one falls back to the defaults instead of failing.
 */
export const PERIODS = ['24h', '7d', '30d', '90d', 'all', 'custom'] as const;
export type Period = (typeof PERIODS)[number];
export const INTERVALS = ['hour', 'day'] as const;
export type Interval = (typeof INTERVALS)[number];

export const PERIOD_LABELS: Record<Period, string> = {
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
  '90d': 'Last 90 days',
  all: 'Since the link was created',
  custom: 'Custom dates',
};

export const DEFAULT_PERIOD: Period = '30d';

export interface StatsView {
  period: Period;
  /** YYYY-MM-DD (UTC), for the custom period */
  from: string;
  to: string;
  interval: Interval;
}

export interface StatsQuery {
  from?: string;
  to?: string;
  interval: Interval;
}

const DAY_MS = 86_400_000;
const HOURS: Record<Exclude<Period, 'all' | 'custom'>, number> = { '24h': 24, '7d': 24 * 7, '30d': 24 * 30, '90d': 24 * 90 };
const isDay = (s: string | null): s is string => s !== null && /^\d{4}-\d\d-\d\d$/.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`));
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export function viewFromQuery(query: URLSearchParams, now: number): StatsView {
  const period = oneOf(query.get('period'), PERIODS) ?? DEFAULT_PERIOD;
  const from = query.get('from');
  const to = query.get('to');
  const interval = oneOf(query.get('interval'), INTERVALS) ?? (period === '24h' ? 'hour' : 'day');
  return {
    period,
    from: isDay(from) ? from : utcDay(now - 7 * DAY_MS),
    to: isDay(to) ? to : utcDay(now),
    interval,
  };
}

/** The API's `from`/`to` (ISO instants; the API rounds them to whole buckets) for a view at a moment. */
export function queryFromView(view: StatsView, now: number): StatsQuery {
  if (view.period === 'all') return { interval: view.interval };
  if (view.period === 'custom') {
    // `to` is the last day shown, inclusive: the window ends at the next midnight.
    const end = Date.parse(`${view.to}T00:00:00Z`) + DAY_MS;
    return { from: `${view.from}T00:00:00.000Z`, to: new Date(end).toISOString(), interval: view.interval };
  }
  return { from: new Date(now - HOURS[view.period] * 3_600_000).toISOString(), to: new Date(now).toISOString(), interval: view.interval };
}
