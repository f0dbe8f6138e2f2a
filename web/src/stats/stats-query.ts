import { oneOf } from '../ui/query-values';
import { isKnownZone, zonedDay, zonedMidnight } from './zoned-time';

/**
 * The analytics view's state, as it sits in the URL (Plausible's way: `?period=7d`, or `period=custom`
 * with `from` and `to` as whole days, plus `interval` (absent or `auto`: the API chooses) and `tz`), and the
 * API query it stands for. Days are
 * the days of `tz` (the browser's zone unless the URL names one), so a shared URL with its `tz` shows the
 * same window; a hand-edited one falls back to the defaults instead of failing.
 */
export const PERIODS = ['24h', '7d', '30d', '90d', 'all', 'custom'] as const;
export type Period = (typeof PERIODS)[number];
/** The API's bucket sizes (weeks: ISO, from Monday; months: calendar months; both from midnight in `tz`). */
export const INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];
/** The view's choice: a bucket size, or `auto`: none sent, the API answers by day, or by week or month where days do not fit. */
export type IntervalChoice = Interval | 'auto';
const CHOICES = ['auto', ...INTERVALS] as const;

/** Where a period menu is: a link's analytics or the account overview ("all" starts at the one's creation). */
export type StatsScreen = 'link' | 'account';

const PERIOD_LABELS: Record<Exclude<Period, 'all'>, string> = {
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
  '90d': 'Last 90 days',
  custom: 'Custom dates',
};

/** The menu's words for a period on a screen: "all" is what the API starts at without `from` there. */
export const periodLabel = (period: Period, screen: StatsScreen): string =>
  period === 'all'
    ? screen === 'link'
      ? 'Since the link was created'
      : 'Since the account was created'
    : PERIOD_LABELS[period];

export const DEFAULT_PERIOD: Period = '30d';

export interface StatsView {
  period: Period;
  /** YYYY-MM-DD (in `tz`), for the custom period */
  from: string;
  to: string;
  interval: IntervalChoice;
  /** IANA zone: day, week and month buckets start at its midnight, times are shown in it */
  tz: string;
}

export interface StatsQuery {
  from?: string;
  to?: string;
  interval?: Interval;
  tz: string;
}

const DAY_MS = 86_400_000;
const HOURS: Record<Exclude<Period, 'all' | 'custom'>, number> = {
  '24h': 24,
  '7d': 24 * 7,
  '30d': 24 * 30,
  '90d': 24 * 90,
};
/** The API answers at most this many buckets (MAX_BUCKETS): a longer window by hour or day is refused or cut. */
const MAX_BUCKETS = 1000;
const daysBetween = (from: string, to: string): number =>
  (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;

/**
 * Whether the view's window can be shown by hour: its hours fit in one answer. "Since … was created" may be
 * any length, so it is by day.
 */
export function hourlyFits(view: Pick<StatsView, 'period' | 'from' | 'to'>): boolean {
  if (view.period === 'all') return false;
  if (view.period === 'custom') return daysBetween(view.from, view.to) * 24 <= MAX_BUCKETS;
  return HOURS[view.period] <= MAX_BUCKETS;
}

/**
 * Whether the view's window can be shown by day. "Since … was created" can: the API then shows its latest
 * 1,000 days (the automatic choice shows all of it, by week or month where it is longer).
 */
export const dailyFits = (view: Pick<StatsView, 'period' | 'from' | 'to'>): boolean =>
  view.period !== 'custom' || daysBetween(view.from, view.to) <= MAX_BUCKETS;

/** Which bucket sizes the view offers: hours and days where they fit, weeks and months always, and the automatic choice. */
export const intervalChoices = (view: Pick<StatsView, 'period' | 'from' | 'to'>): IntervalChoice[] =>
  CHOICES.filter((i) => (i === 'hour' ? hourlyFits(view) : i === 'day' ? dailyFits(view) : true));

/**
 * Without `interval` in the URL: by hour for 24 hours, automatic since the creation (which may be years), by day
 * otherwise (a custom window longer than 1,000 days: automatic).
 */
const defaultInterval = (period: Period): IntervalChoice =>
  period === '24h' ? 'hour' : period === 'all' ? 'auto' : 'day';

const isDay = (s: string | null): s is string =>
  s !== null && /^\d{4}-\d\d-\d\d$/.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`));
/** `localZone`: the zone when the URL names none (the browser's). */
export function viewFromQuery(query: URLSearchParams, now: number, localZone = 'UTC'): StatsView {
  const period = oneOf(query.get('period'), PERIODS) ?? DEFAULT_PERIOD;
  const from = query.get('from');
  const to = query.get('to');
  const asked = query.get('tz');
  const tz = asked && isKnownZone(asked) ? asked : localZone;
  const days = { from: isDay(from) ? from : zonedDay(now - 7 * DAY_MS, tz), to: isDay(to) ? to : zonedDay(now, tz) };
  const wanted = oneOf(query.get('interval'), CHOICES) ?? defaultInterval(period);
  // By hour or day only where the window's buckets fit one answer (a shared URL from before stays readable).
  const offered = intervalChoices({ period, ...days });
  const interval = offered.includes(wanted) ? wanted : offered.includes('day') && period !== 'all' ? 'day' : 'auto';
  return { period, ...days, interval, tz };
}

/** The API's `from`/`to` (ISO instants; the API rounds them to whole buckets) for a view at a moment. */
export function queryFromView(view: StatsView, now: number): StatsQuery {
  const { tz } = view;
  // Automatic: no interval sent, the API chooses (and says which in its answer).
  const interval = view.interval === 'auto' ? {} : { interval: view.interval };
  if (view.period === 'all') return { ...interval, tz };
  if (view.period === 'custom') {
    // `to` is the last day shown, inclusive: the window ends at the next midnight (in the zone).
    const next = new Date(Date.parse(`${view.to}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
    return {
      from: new Date(zonedMidnight(view.from, tz)).toISOString(),
      to: new Date(zonedMidnight(next, tz)).toISOString(),
      ...interval,
      tz,
    };
  }
  return {
    from: new Date(now - HOURS[view.period] * 3_600_000).toISOString(),
    to: new Date(now).toISOString(),
    ...interval,
    tz,
  };
}
