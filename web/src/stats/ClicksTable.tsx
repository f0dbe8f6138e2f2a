import type { LinkStats } from '../api/client';
import { formatCount } from '../ui/format';
import { TableHead } from '../ui/TableHead';
import { bucketLabel, bucketName } from './bucket-label';
import type { Interval } from './stats-query';

/** The chart's numbers as a table (the accessible form of ClicksChart), folded away by default. */
export function ClicksTable({
  timeseries,
  interval,
  tz,
}: {
  timeseries: LinkStats['timeseries'];
  interval: Interval;
  tz: string;
}) {
  const unit = `${bucketName(interval)} (${tz})`;
  return (
    <details class="chart-data">
      <summary>Chart data</summary>
      <table class="table compact">
        <caption class="visually-hidden">
          Clicks by people and by bots per {interval} ({tz})
        </caption>
        <TableHead columns={[unit, { label: 'People', numeric: true }, { label: 'Bots', numeric: true }]} />
        <tbody>
          {timeseries.map((b) => (
            <tr key={b.start}>
              <td>
                <time dateTime={b.start}>{bucketLabel(b.start, interval, tz)}</time>
              </td>
              <td class="num" data-clicks={b.clicks}>
                {formatCount(b.clicks)}
              </td>
              <td class="num" data-bots={b.bots}>
                {formatCount(b.bots)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
