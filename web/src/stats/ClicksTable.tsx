import type { LinkStats } from '../api/client';
import { formatCount } from '../ui/format';
import type { Interval } from './stats-query';

const bucketLabel = (iso: string, interval: Interval): string => (interval === 'hour' ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : iso.slice(0, 10));

/** The chart's numbers as a table (the accessible form of ClicksChart), folded away by default. */
export function ClicksTable({ timeseries, interval }: { timeseries: LinkStats['timeseries']; interval: Interval }) {
  return (
    <details class="chart-data">
      <summary>Chart data</summary>
      <table class="table compact">
        <caption class="visually-hidden">Clicks per {interval} (UTC)</caption>
        <thead>
          <tr>
            <th scope="col">{interval === 'hour' ? 'Hour (UTC)' : 'Day (UTC)'}</th>
            <th scope="col" class="num">
              Clicks
            </th>
          </tr>
        </thead>
        <tbody>
          {timeseries.map((b) => (
            <tr key={b.start}>
              <td>
                <time dateTime={b.start}>{bucketLabel(b.start, interval)}</time>
              </td>
              <td class="num" data-clicks={b.clicks}>
                {formatCount(b.clicks)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
