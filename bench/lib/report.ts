/** The benchmark results as one Markdown table (and the targets checked against them). */

export interface Row {
  name: string;
  /** what was measured, in a few words (data, configuration) */
  setup: string;
  /** requests/s, persisted clicks/s for ingestion, delivered events/s for webhooks */
  perSecond: number;
  unit: 'req/s' | 'clicks/s' | 'starts/s' | 'events/s';
  latencyMs: { p50: number; p99: number; p999: number } | null;
  /** answers that were not the expected status, plus connection errors */
  errors: number;
  /** server CPU over the measured run: all threads, per request (µs) and in cores */
  cpuUsPerRequest: number | null;
  cpuCores: number | null;
  /** the same for the main thread alone (the event loop; the rest is worker threads: click writer, checkpoints) */
  mainCpuUsPerRequest: number | null;
  /** ingestion on the embedded engine: the click writer thread's own CPU per click (µs) */
  writerCpuUsPerClick?: number;
  peakRssBytes: number | null;
  /** redirect-sse-1000: the RSS its open event streams added (bench/sse-subscribers.ts), and how many opened */
  extraRssBytes?: number;
  subscribers?: number;
  /** free text: checks (click records counted), env */
  notes: string;
  /** the baseline's rate in the rounds measured alongside this benchmark (redirects) */
  baselinePerSecond?: number;
  /** otherwise: the baseline's rate over the whole run (bench/run.ts), for a machine-independent figure */
  runBaselinePerSecond?: number;
}

export interface Target {
  name: string;
  met: boolean;
  detail: string;
}

const num = (n: number): string => Math.round(n).toLocaleString('en-US');
const ms = (n: number): string => (n < 10 ? n.toFixed(2) : n.toFixed(1));

/** A row for a benchmark that could not run here (a service it needs is unreachable): why, and no figures. */
export const notMeasured = (name: string, unit: Row['unit'], why: string): Row => ({
  name,
  setup: 'not measured',
  perSecond: 0,
  unit,
  latencyMs: null,
  errors: 0,
  cpuUsPerRequest: null,
  cpuCores: null,
  mainCpuUsPerRequest: null,
  peakRssBytes: null,
  notes: why,
});

export function markdown(rows: Row[], targets: Target[], header: string): string {
  const lines = [
    header,
    '',
    '| benchmark | setup | rate | × baseline | p50 ms | p99 ms | p99.9 ms | errors | server CPU µs/req (cores) | main thread µs/req | peak RSS MB | notes |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    const ratio = r.baselinePerSecond
      ? (r.perSecond / r.baselinePerSecond).toFixed(2)
      : r.name === 'baseline'
        ? '1.00'
        : r.runBaselinePerSecond
          ? `${(r.perSecond / r.runBaselinePerSecond).toFixed(2)} †`
          : '';
    const lat = r.latencyMs ? [ms(r.latencyMs.p50), ms(r.latencyMs.p99), ms(r.latencyMs.p999)] : ['', '', ''];
    const cpu = r.cpuUsPerRequest === null ? '' : `${r.cpuUsPerRequest.toFixed(1)} (${(r.cpuCores ?? 0).toFixed(2)})`;
    const rss = r.peakRssBytes === null ? '' : (r.peakRssBytes / 1048576).toFixed(0);
    const main = r.mainCpuUsPerRequest === null ? '' : r.mainCpuUsPerRequest.toFixed(1);
    lines.push(
      `| ${r.name} | ${r.setup} | ${num(r.perSecond)} ${r.unit} | ${ratio} | ${lat.join(' | ')} | ${r.errors} | ${cpu} | ${main} | ${rss} | ${r.notes} |`,
    );
  }
  if (rows.some((r) => !r.baselinePerSecond && r.runBaselinePerSecond)) {
    lines.push(
      '',
      "× baseline: the rate over the baseline's in rounds alternating with it (redirects); † over the baseline's rate in the whole run (other work per request, so a figure to compare between machines and runs, not a target).",
    );
  }
  if (targets.length > 0) {
    lines.push('', '| target | met | measured |', '|---|---|---|');
    for (const t of targets) lines.push(`| ${t.name} | ${t.met ? 'yes' : '**no**'} | ${t.detail} |`);
  }
  return `${lines.join('\n')}\n`;
}
