import type { LinkStats } from '../api/client';
import { TopList } from './TopList';

type Tops = Pick<LinkStats, 'top_referrers' | 'top_browsers' | 'top_os' | 'top_devices' | 'top_countries'>;

let regions: Intl.DisplayNames | null = null;
/** `DE` → "Germany (DE)"; a value that is no region code ("(unknown)") as it is. */
function countryName(code: string): string {
  if (!/^[A-Z]{2}$/.test(code)) return code;
  try {
    regions ??= new Intl.DisplayNames(undefined, { type: 'region' });
    const name = regions.of(code);
    return name && name !== code ? `${name} (${code})` : code;
  } catch {
    return code;
  }
}

/** The ranked panels of the window (people only, SPEC §15): where visits come from, and with what. */
export function StatsPanels({ stats }: { stats: Tops }) {
  return (
    <div class="panels">
      <TopList title="Top referrers" items={stats.top_referrers} empty="No referrers in this period." />
      <TopList title="Countries" items={stats.top_countries} empty="No countries in this period." show={countryName} />
      <TopList title="Browsers" items={stats.top_browsers} empty="No browsers in this period." />
      <TopList title="Operating systems" items={stats.top_os} empty="No operating systems in this period." />
      <TopList title="Devices" items={stats.top_devices} empty="No devices in this period." />
    </div>
  );
}
