import type { LinkStats } from '../api/client';
import { formatCount } from '../ui/format';
import { TableHead } from '../ui/TableHead';
import type { Interval } from './stats-query';

const bucketLabel = (iso: string, interval: Interval): string => (interval === 'hour' ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : iso.slice(0, 10));

/** The chart's numbers as a table (the accessible form of ClicksChart), folded away by default. */
export function ClicksTable({ timeseries, interval }: { timeseries: LinkStats['timeseries']; interval: Interval }) {
  return (
    <details class="chart-data">
      <summary>Chart data</summary>
      <table class="table compact">
        <caption class="visually-hidden">Clicks per {interval} (UTC)</caption>
        <TableHead columns={[interval === 'hour' ? 'Hour (UTC)' : 'Day (UTC)', { label: 'Clicks', numeric: true }]} />
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
