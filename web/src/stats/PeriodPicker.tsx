import type { Problem } from '../api/problem';
import { navigate, useLocation, withQuery } from '../router/router';
import { Field } from '../ui/Field';
import { browserZone } from './zoned-time';
import {
  intervalChoices,
  periodLabel,
  PERIODS,
  type IntervalChoice,
  type Period,
  type StatsScreen,
  type StatsView,
} from './stats-query';

const INTERVAL_LABELS: Record<IntervalChoice, string> = {
  auto: 'Automatic',
  hour: 'By hour',
  day: 'By day',
  week: 'By week',
  month: 'By month',
};

/** UTC, the browser's zone and the view's first, then every zone the browser knows. */
function zoneChoices(current: string): string[] {
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return [...new Set(['UTC', browserZone(), current, ...known])];
}

type ChangeQuery = (changes: Record<string, string | null>) => void;
type FieldErrors = NonNullable<Problem['fields']>;

/** A custom period's two dates, each bounded by the other. */
function CustomRange({ view, fields, change }: { view: StatsView; fields: FieldErrors; change: ChangeQuery }) {
  return (
    <>
      <Field label="From" error={fields.from}>
        {(a) => (
          <input
            {...a}
            name="from"
            type="date"
            value={view.from}
            max={view.to}
            onChange={(e) => e.currentTarget.value && change({ from: e.currentTarget.value })}
          />
        )}
      </Field>
      <Field label="To" error={fields.to}>
        {(a) => (
          <input
            {...a}
            name="to"
            type="date"
            value={view.to}
            min={view.from}
            onChange={(e) => e.currentTarget.value && change({ to: e.currentTarget.value })}
          />
        )}
      </Field>
    </>
  );
}

/** The time zone the buckets and dates are in. */
function ZoneField({ tz, error, change }: { tz: string; error: string | undefined; change: ChangeQuery }) {
  return (
    <Field label="Time zone" error={error}>
      {(a) => (
        <select {...a} name="tz" value={tz} onChange={(e) => change({ tz: e.currentTarget.value })}>
          {zoneChoices(tz).map((z) => (
            <option key={z} value={z}>
              {z}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/**
 * The date range, bucket size and time zone every panel follows (Plausible's picker). Each change rewrites the URL's
 * query (without a history entry per tweak); the page reloads its data from the URL. The periods are named for
 * the screen (`scope`); "By hour" and "By day" are offered only where the window's buckets fit one answer, "By
 * week" and "By month" always, and "Automatic" leaves the choice to the API (which says in its answer).
 */
export function PeriodPicker({
  view,
  scope,
  problem,
}: {
  view: StatsView;
  scope: StatsScreen;
  problem: Problem | null;
}) {
  const location = useLocation();
  const change = (changes: Record<string, string | null>) => navigate(withQuery(location, changes), { replace: true });
  const fields = problem?.fields ?? {};
  // A period too long for the chosen bucket size drops it from the URL too, so that a shared URL says what is shown.
  const pickPeriod = (period: Period) =>
    change({
      period,
      ...(period === 'custom' ? { from: view.from, to: view.to } : { from: null, to: null }),
      ...(intervalChoices({ ...view, period }).includes(view.interval) ? {} : { interval: null }),
    });
  return (
    <form class="period-picker" onSubmit={(e) => e.preventDefault()} aria-label="Date range">
      <Field label="Period" error={view.period === 'custom' ? undefined : (fields.from ?? fields.to)}>
        {(a) => (
          <select
            {...a}
            name="period"
            value={view.period}
            onChange={(e) => pickPeriod(e.currentTarget.value as Period)}
          >
            {PERIODS.map((p) => (
              <option key={p} value={p}>
                {periodLabel(p, scope)}
              </option>
            ))}
          </select>
        )}
      </Field>
      {view.period === 'custom' && <CustomRange view={view} fields={fields} change={change} />}
      <Field label="Interval" error={fields.interval}>
        {(a) => (
          <select
            {...a}
            name="interval"
            value={view.interval}
            onChange={(e) => change({ interval: e.currentTarget.value })}
          >
            {intervalChoices(view).map((i) => (
              <option key={i} value={i}>
                {INTERVAL_LABELS[i]}
              </option>
            ))}
          </select>
        )}
      </Field>
      <ZoneField tz={view.tz} error={fields.tz} change={change} />
    </form>
  );
}
