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

/**
 * What a link's rules chose in the window (SPEC §21): human clicks by rule and by A/B variant. Shown only when
 * a rule or a split routed a visit, so a link without rules keeps its page as it was.
 */
export function RoutingPanels({ stats }: { stats: Pick<LinkStats, 'by_rule' | 'by_variant'> }) {
  if (stats.by_rule.length === 0 && stats.by_variant.length === 0) return null;
  return (
    <div class="panels">
      <TopList
        title="By rule"
        items={stats.by_rule.map((r) => ({ value: r.rule_id, clicks: r.human_clicks }))}
        empty="No rule chose a URL in this period."
        show={(id) => `Rule ${id}`}
      />
      <TopList
        title="By variant"
        items={stats.by_variant.map((v) => ({ value: v.variant_id, clicks: v.human_clicks }))}
        empty="No split chose a variant in this period."
        show={(id) => `Variant ${id}`}
      />
    </div>
  );
}
