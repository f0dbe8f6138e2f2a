/**
 * Driving one server with bench/load.ts (each run a child process) and turning what was measured into a
 * table row. A redirect benchmark is measured in rounds that alternate with the baseline server (the
 * machine is shared and its load drifts): each round, the baseline first, then Ferry, so that the ratio
 * compares runs made under the same conditions. Ferry's click queue is drained before each baseline round,
 * so that its writer does not take CPU from the baseline.
 */
import path from 'node:path';
import { SqliteDatabase as Database } from '../../src/db/sqlite-driver.js';
import type { LoadResult, LoadSpec } from '../load.js';
import { latencyOf } from './latency.js';
import { cpuSeconds, peakRssBytes, runJson, stopServer, type Server } from './proc.js';
import type { Row } from './report.js';

export type Workload = Omit<LoadSpec, 'url' | 'connections' | 'duration'>;

export interface DriveContext {
  connections: number;
  warmup: number;
  duration: number;
  /** rounds a paired (redirect) measurement is cut into */
  rounds: number;
}

/** One measured load run and the server's CPU over it. */
export interface Slice {
  result: LoadResult;
  cpuSeconds: number | null;
  mainCpuSeconds: number | null;
}

export interface Measured {
  warm: LoadResult[];
  slices: Slice[];
  /** the baseline's slices measured between this server's */
  paired: Slice[];
  peakRss: number | null;
  exitCode: number | null;
  /** the server's own count of redirects answered (its /metrics), read before SIGTERM */
  redirectsServed: number | null;
}

export const load = async (ctx: DriveContext, server: Server, spec: Workload, duration: number): Promise<LoadResult> =>
  (
    await runJson<LoadResult>(
      [
        '--import',
        'tsx',
        'bench/load.ts',
        JSON.stringify({ ...spec, url: server.url, connections: ctx.connections, duration }),
      ],
      {},
    )
  ).result;

export async function slice(ctx: DriveContext, server: Server, spec: Workload, duration: number): Promise<Slice> {
  const pid = server.child.pid;
  const [before, mainBefore] = [cpuSeconds(pid), cpuSeconds(pid, true)];
  const result = await load(ctx, server, spec, duration);
  const [after, mainAfter] = [cpuSeconds(pid), cpuSeconds(pid, true)];
  const delta = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
  return { result, cpuSeconds: delta(before, after), mainCpuSeconds: delta(mainBefore, mainAfter) };
}

async function metricValue(server: Server, prefix: string): Promise<number | null> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : null;
}

/** The redirects the server has answered (its metrics). */
export const redirectCount = (server: Server): Promise<number | null> =>
  metricValue(server, 'ferry_redirect_duration_seconds_count{status_code="302"}');

/** Visits whose client left before the answer (the load generator stopping mid-request): not among the answered. */
export const abandonedCount = async (server: Server): Promise<number> =>
  (await metricValue(server, 'ferry_redirects_abandoned_total')) ?? 0;

/**
 * The verdict on a run's clicks: every answered redirect one record and one count, and no record beyond them but
 * for visits the load generator abandoned while their answer waited (their click may have been recorded first).
 */
export function clickVerdict(answered: number | null, records: number, counted: number, abandoned = 0): string {
  const ok = answered !== null && counted === records && records >= answered && records <= answered + abandoned;
  const left = abandoned > 0 ? ` (and ${abandoned} abandoned by the load generator before their answer)` : '';
  const served = `${answered} redirects served${left}`;
  return `${ok ? 'no click lost' : '**CLICKS LOST**'}: ${served}, ${records} click records, click_count sum ${counted}`;
}

export async function queueDrained(server: Server): Promise<void> {
  for (let i = 0; i < 600; i += 1) {
    if ((await metricValue(server, 'ferry_click_queue_depth ')) === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Warm-up (a pass over every code first, if given), then the measured run(s) with the server's CPU time
 * around each; with `paired`, `ctx.rounds` rounds alternating with that server (`ferry`: another Ferry server,
 * whose click queue is drained too before each round of this one). Then SIGTERM.
 */
export async function drive(
  ctx: DriveContext,
  server: Server,
  spec: Workload,
  opts: {
    pass?: Workload;
    countRedirects?: boolean;
    paired?: { server: Server; spec: Workload; ferry?: boolean };
  } = {},
): Promise<Measured> {
  const warm = opts.pass ? [await load(ctx, server, opts.pass, 0)] : [];
  warm.push(await load(ctx, server, spec, ctx.warmup));
  const slices: Slice[] = [];
  const paired: Slice[] = [];
  if (opts.paired) {
    const each = ctx.duration / ctx.rounds;
    for (let r = 0; r < ctx.rounds; r += 1) {
      await queueDrained(server);
      paired.push(await slice(ctx, opts.paired.server, opts.paired.spec, each));
      // A Ferry twin's writer finishes its round's clicks before this server's round starts.
      if (opts.paired.ferry) await queueDrained(opts.paired.server);
      slices.push(await slice(ctx, server, spec, each));
    }
  } else {
    slices.push(await slice(ctx, server, spec, ctx.duration));
  }
  const peakRss = peakRssBytes(server.child.pid);
  const served = opts.countRedirects ? await redirectCount(server) : null;
  const exitCode = await stopServer(server.child);
  return { warm, slices, paired, peakRss, exitCode, redirectsServed: served };
}

/** Slices added together: a rate over their summed wall time, latencies from their merged histograms. */
export function merge(slices: Slice[]) {
  const sum = (f: (s: Slice) => number) => slices.reduce((n, s) => n + f(s), 0);
  const nullable = (f: (s: Slice) => number | null) => (slices.some((s) => f(s) === null) ? null : sum((s) => f(s)!));
  const statuses: Record<string, number> = {};
  for (const s of slices) for (const [k, v] of Object.entries(s.result.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  const requests = sum((s) => s.result.requests);
  const seconds = sum((s) => s.result.seconds);
  return {
    requests,
    seconds,
    perSecond: requests / seconds,
    statuses,
    errors: sum((s) => s.result.errors),
    latency: latencyOf(slices.map((s) => s.result.histogram)),
    cpuSeconds: nullable((s) => s.cpuSeconds),
    mainCpuSeconds: nullable((s) => s.mainCpuSeconds),
  };
}

export function rowOf(
  name: string,
  setup: string,
  slices: Slice[],
  extra: { expected: number; notes: string[]; peakRss: number | null; exitCode?: number | null; baseline?: Slice[] },
): Row {
  const m = merge(slices);
  const notes = [...extra.notes];
  const others = Object.entries(m.statuses).filter(([status]) => Number(status) !== extra.expected);
  if (others.length) notes.push(`unexpected: ${others.map(([status, count]) => `${count}× ${status}`).join(', ')}`);
  if (extra.exitCode !== undefined && extra.exitCode !== 0) notes.push(`server exited ${extra.exitCode}`);
  const per = (cpu: number | null) => (cpu === null || m.requests === 0 ? null : (cpu * 1e6) / m.requests);
  return {
    name,
    setup,
    perSecond: m.perSecond,
    unit: 'req/s',
    latencyMs: { p50: m.latency.p50, p99: m.latency.p99, p999: m.latency.p999 },
    errors: others.reduce((n, [, c]) => n + c, 0) + m.errors,
    cpuUsPerRequest: per(m.cpuSeconds),
    cpuCores: m.cpuSeconds === null ? null : m.cpuSeconds / m.seconds,
    mainCpuUsPerRequest: per(m.mainCpuSeconds),
    peakRssBytes: extra.peakRss,
    notes: notes.join('; '),
    ...(extra.baseline?.length ? { baselinePerSecond: merge(extra.baseline).perSecond } : {}),
  };
}

/**
 * Every redirect answered (warm-up included, as the server counted them: the load generator does not see
 * the answers still in flight when it stops) must be a click record once the server has exited.
 */
export function clickCheck(dataDir: string, answered: number | null): string {
  const db = new Database(path.join(dataDir, 'ferry.db'), { readonly: true });
  const records = (db.prepare('select count(*) as n from clicks').get() as { n: number }).n;
  const counted = (db.prepare('select coalesce(sum(click_count), 0) as n from links').get() as { n: number }).n;
  db.close();
  return clickVerdict(answered, records, counted);
}
