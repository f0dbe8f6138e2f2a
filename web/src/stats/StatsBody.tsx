import type { ComponentChildren } from 'preact';
import type { LinkStats } from '../api/client';
import { ClicksChart } from './ClicksChart';
import { ClicksTable } from './ClicksTable';
import { StatsPanels } from './StatsPanels';
import { StatsSummary, type StatsScope } from './StatsSummary';

/** What link and account analytics share (SPEC §15: the user's stats have the link's shape; rules, §21, are a link's own). */
export type StatsShape = Omit<LinkStats, 'short_code' | 'click_count' | 'first_click_at' | 'by_rule' | 'by_variant'>;

/**
 * Plausible's layout: the figures, clicks over time on top (people and bots apart), then the ranked panels
 * side by side. `scope` names the figures for a link or an account; `extra` adds a figure in front (the account's number of links), `children` more panels.
 */
export function StatsBody({
  stats,
  scope,
  updating,
  extra,
  children,
}: {
  stats: StatsShape;
  scope: StatsScope;
  updating: boolean;
  extra?: { label: string; value: string };
  children?: ComponentChildren;
}) {
  const people = stats.timeseries.reduce((sum, b) => sum + b.clicks, 0);
  const bots = stats.timeseries.reduce((sum, b) => sum + b.bots, 0);
  return (
    <div class="stats" aria-busy={updating}>
      <StatsSummary stats={stats} scope={scope} {...(extra ? { extra } : {})} />
      <section class="panel wide" aria-labelledby="clicks-over-time">
        <h2 id="clicks-over-time">Clicks over time</h2>
        {people + bots === 0 && (
          <p class="muted">No clicks in this period yet: the chart stays at zero until the first visit.</p>
        )}
        <ClicksChart
          timeseries={stats.timeseries}
          interval={stats.interval}
          tz={stats.tz}
          label={`Clicks per ${stats.interval} (${stats.tz}) from ${stats.from} to ${stats.to}: ${people} by people, ${bots} by bots`}
        />
        <ClicksTable timeseries={stats.timeseries} interval={stats.interval} tz={stats.tz} />
      </section>
      {children}
      <StatsPanels stats={stats} />
    </div>
  );
}
