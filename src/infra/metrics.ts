import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { registerEventSeries, registerWebhookSeries } from './event-metrics.js';
import { createFastRedirectTally } from './fast-redirect-tally.js';
import type { Storage } from '../db/database.js';
import type { Clock } from '../lib/clock.js';

/**
 * Prometheus metrics (SPEC §8), one registry per app (no module-level singleton, so tests can build several
 * apps). Served as text by `GET /metrics` (modules/health).
 *
 * Seams for other modules:
 * - the click queue reports through `setClickQueueProvider(() => ({ depth, dropped, lastFlushAt }))`, read at
 *   scrape time (nothing is pushed on the redirect path);
 * - the redirect's latency is observed by plugins/request-metrics.ts for the route url `/:code` (or any route
 *   whose config has `redirect: true`), so the redirect itself needs no metrics code.
 */
export interface ClickQueueStats {
  /** clicks waiting to be written */
  depth: number;
  /** clicks dropped since start because the queue was full (cumulative) */
  dropped: number;
  /** clock time (ms) of the last successful flush, null before the first */
  lastFlushAt: number | null;
  /** clicks diverted to the in-process fallback during Redis outages (cumulative; 0 without Redis) */
  fellBack?: number;
  /** the Redis click stream's backlog and live consumers (scale-out only) */
  stream?: { backlog: number; consumers: number } | null;
  /** the embedded engine's journal: what an earlier process left behind is not all written yet (replaying, or failed) */
  journalReplaying?: boolean;
  /** the embedded engine's journal: its last write failed (a full disk), clicks held in memory only */
  journalDegraded?: boolean;
  /** the embedded engine's journal: clicks whose lines could not be written (cumulative) */
  unjournaledClicks?: number;
}

/** Buckets for API requests (seconds): 1 ms to 10 s. */
export const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Finer buckets for the redirect, whose P99 must stay below 10 ms. */
export const REDIRECT_BUCKETS = [0.00025, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1];

/** A click-pipeline series, read from the queue's stats at scrape time. */
interface ClickSeries {
  name: string;
  help: string;
  /** a counter's value is cumulative (the stats' own count); a gauge's is the current one */
  kind: 'counter' | 'gauge';
  value: (stats: ClickQueueStats, lagSeconds: number) => number;
}

const CLICK_SERIES: ClickSeries[] = [
  {
    name: 'ferry_click_queue_depth',
    kind: 'gauge',
    help: 'Clicks waiting in the queue to be written',
    value: (s) => s.depth,
  },
  {
    name: 'ferry_click_flush_lag_seconds',
    kind: 'gauge',
    value: (_s, lag) => lag,
    help: 'Seconds since the last successful click flush while clicks are waiting (0 when the queue is empty)',
  },
  {
    name: 'ferry_clicks_dropped_total',
    kind: 'counter',
    help: 'Clicks dropped because the click queue was full',
    value: (s) => s.dropped,
  },
  {
    name: 'ferry_clicks_fallback_total',
    kind: 'counter',
    value: (s) => s.fellBack ?? 0,
    help: 'Clicks diverted to the in-process fallback queue because the Redis click stream was unavailable',
  },
  {
    name: 'ferry_click_stream_backlog',
    kind: 'gauge',
    value: (s) => s.stream?.backlog ?? 0,
    help: 'Clicks in the Redis click stream not yet written (all instances; scale-out only, else 0)',
  },
  {
    name: 'ferry_click_journal_replaying',
    kind: 'gauge',
    value: (s) => (s.journalReplaying ? 1 : 0),
    help: '1 until the clicks an earlier process left in the click journal are written: the background replay runs, or failed and the next start writes them (statistics lag meanwhile; embedded engine only, else 0)',
  },
  {
    name: 'ferry_click_journal_degraded',
    kind: 'gauge',
    value: (s) => (s.journalDegraded ? 1 : 0),
    help: '1 while the click journal cannot write (a full or failing disk): the clicks since are held in memory only, and a process kill loses them (embedded engine only, else 0)',
  },
  {
    name: 'ferry_clicks_unjournaled_total',
    kind: 'counter',
    value: (s) => s.unjournaledClicks ?? 0,
    help: 'Clicks the click journal could not write (a full or failing disk); they stay queued in memory and are written to the database once it can write',
  },
  {
    name: 'ferry_click_stream_consumers',
    kind: 'gauge',
    value: (s) => s.stream?.consumers ?? 0,
    help: 'Consumers of the Redis click stream seen alive in the last 30 s (scale-out only, else 0)',
  },
];

export function createMetrics(deps: { storage: Pick<Storage, 'connections'>; clock: Clock }) {
  const { storage, clock } = deps;
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  const startedAt = clock.now();
  let clickQueue: (() => ClickQueueStats) | null = null;
  const clickStats = (): ClickQueueStats => clickQueue?.() ?? { depth: 0, dropped: 0, lastFlushAt: null };
  const http = createHttpSeries(registers);
  registerClickSeries(registers, () => {
    const s = clickStats();
    return { stats: s, lagSeconds: s.depth === 0 ? 0 : Math.max(0, clock.now() - (s.lastFlushAt ?? startedAt)) / 1000 };
  });
  registerPoolSeries(registers, storage);
  const shed = new Counter({
    name: 'ferry_overload_shed_total',
    help: 'Requests answered 503 because a load bound was exceeded, by bound',
    labelNames: ['reason'] as const,
    registers,
  });
  const jobRuns = new Counter({
    name: 'ferry_job_runs_total',
    help: 'Background job runs this instance made (in its turn among the instances), by job and outcome',
    labelNames: ['job', 'outcome'] as const,
    registers,
  });

  const webhooks = registerWebhookSeries(registers);
  const events = registerEventSeries(registers);

  return {
    registry,
    /** a webhook attempt ended: delivered, failed for good, or failed with a retry scheduled (SPEC §22) */
    recordWebhookDelivery: webhooks.record,
    /** the age of the oldest delivery not made yet, asked on each scrape (the webhooks module's) */
    setWebhookBacklogProvider: webhooks.setBacklog,
    /** events the message bus confirmed (SPEC §22), by type */
    recordEventsPublished: events.recordPublished,
    /** the bus's state and backlog, asked on each scrape (the events module's; none without EVENTS_URL) */
    setEventsBusProvider: events.setBusProvider,
    /** how many events were ever written, asked on each scrape (the events module's) */
    setEventsWrittenProvider: events.setWrittenProvider,
    observeRequest: http.observeRequest,
    observeRedirect: http.observeRedirect,
    /** a visit to the redirect route whose client left before its answer was sent */
    observeRedirectAbandoned: http.observeRedirectAbandoned,
    /** A redirect answered by the fast path: the same two series as through Fastify, and the fast-path count. */
    observeFastRedirect: http.observeFastRedirect,
    /** requests answered since the start, through Fastify and the fast path (infra/serving-load.ts) */
    requestsAnswered: http.answered,
    recordShed(reason: string): void {
      shed.inc({ reason });
    },
    /** a background job's run ended here (infra/job-runner.ts) */
    recordJobRun(job: string, outcome: 'ok' | 'failed'): void {
      jobRuns.inc({ job, outcome });
    },
    setClickQueueProvider(provider: () => ClickQueueStats): void {
      clickQueue = provider;
    },
    /** the Prometheus text exposition */
    async render(): Promise<{ contentType: string; body: string }> {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
    // Let go of the app: prom-client's GC observer is never disconnected and holds the registry, whose series'
    // `collect` closures kept each closed app alive (11 MB; a test worker reached its heap bound and shed load).
    close(): void {
      registry.clear();
      clickQueue = null;
    },
  };
}

/** Requests and their durations by route template, and the redirect's latency. */
function createHttpSeries(registers: Registry[]) {
  // The fast path's tallies are folded in whenever one of its series is read (`collect`): a scrape sees every redirect.
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers,
    collect: () => fast.fold(),
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response, by method, route template and status',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: HTTP_BUCKETS,
    registers,
    collect: () => fast.fold(),
  });
  const redirectDuration = new Histogram({
    name: 'ferry_redirect_duration_seconds',
    help: 'Latency of GET/HEAD /{code} (the redirect), by status',
    labelNames: ['status_code'] as const,
    buckets: REDIRECT_BUCKETS,
    registers,
    collect: () => fast.fold(),
  });
  let answered = 0;
  const observeRequest = (method: string, route: string, status: number, seconds: number): void => {
    const labels = { method, route, status_code: status };
    answered += 1;
    requests.inc(labels);
    duration.observe(labels, seconds);
  };
  const observeRedirect = (status: number, seconds: number): void => {
    redirectDuration.observe({ status_code: status }, seconds);
  };
  const abandoned = new Counter({
    name: 'ferry_redirects_abandoned_total',
    help: "Redirect visits whose client left before the answer was sent (not in the two series above; a GET's click may count)",
    registers,
  });
  const observeRedirectAbandoned = (): void => abandoned.inc();
  const fast = createFastRedirectTally({ requests, duration, redirectDuration }, HTTP_BUCKETS, REDIRECT_BUCKETS);
  new Counter({
    name: 'ferry_redirect_fast_path_total',
    help: "Redirects answered by the fast path for cached links, without Fastify's hooks (also in the two series above)",
    registers,
    collect() {
      this.reset();
      this.inc(fast.total());
    },
  });
  return {
    observeRequest,
    observeRedirect,
    observeRedirectAbandoned,
    observeFastRedirect: fast.observe,
    answered: () => answered + fast.total(),
  };
}

/** The click pipeline's series (CLICK_SERIES), each read at scrape time: nothing is pushed on the redirect path. */
function registerClickSeries(registers: Registry[], read: () => { stats: ClickQueueStats; lagSeconds: number }): void {
  for (const series of CLICK_SERIES) {
    const value = () => {
      const { stats, lagSeconds } = read();
      return series.value(stats, lagSeconds);
    };
    const { name, help } = series;
    if (series.kind === 'gauge') {
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(value());
        },
      });
    } else {
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(value());
        },
      });
    }
  }
}

/** The database's connections by state. */
function registerPoolSeries(registers: Registry[], storage: Pick<Storage, 'connections'>): void {
  new Gauge({
    name: 'ferry_db_pool_connections',
    help: 'Database connections by state (PostgreSQL pool; the embedded SQLite engine has one connection)',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const c = storage.connections();
      for (const state of ['total', 'idle', 'waiting', 'max'] as const) this.set({ state }, c[state]);
    },
  });
}

export type Metrics = ReturnType<typeof createMetrics>;
