/**
 * `webhooks` in `npm run bench` (SPEC §22, issue 40): bench/webhooks.ts — 10,000 `link.created` events to one hook,
 * the default WEBHOOK_CONCURRENCY, a receiver on loopback in a process of its own — on the embedded default and, in
 * a fresh database on BENCH_PG_URL's server, on PostgreSQL (a row saying why when it cannot be reached). The
 * target: at least 1,000 events a second on each.
 */
import { freshDatabase } from './ingest-scaleout.js';
import { runJson } from './lib/proc.js';
import { notMeasured, type Row } from './lib/report.js';
import type { Scenario } from './scenarios.js';

interface WebhooksResult {
  engine: string;
  events: number;
  concurrency: number;
  seconds: number;
  eventsPerSecond: number;
  busiestSecond: number;
  requests: number;
}

const rowOf = (name: string, r: WebhooksResult): Row => ({
  name,
  setup:
    `${r.events.toLocaleString('en-US')} link.created events to one hook, WEBHOOK_CONCURRENCY ${r.concurrency}, ` +
    `receiver on loopback in its own process; ${r.engine}`,
  perSecond: r.eventsPerSecond,
  unit: 'events/s',
  latencyMs: null,
  errors: r.events - r.requests,
  cpuUsPerRequest: null,
  cpuCores: null,
  mainCpuUsPerRequest: null,
  peakRssBytes: null,
  notes:
    `from the first write to the receiver's last request ${r.seconds.toFixed(2)} s; ` +
    `busiest second ${r.busiestSecond}; ${r.requests} requests (each event once)`,
});

const run = (env: Record<string, string>) => runJson<WebhooksResult>(['--import', 'tsx', 'bench/webhooks.ts'], env);

export const webhookThroughput: Scenario = {
  name: 'webhooks',
  needs: [],
  describe: () =>
    'webhook deliveries to a loopback receiver, 10,000 events, default concurrency; SQLite and PostgreSQL',
  async run() {
    const sqlite = rowOf('webhooks-sqlite', (await run({})).result);
    const db = await freshDatabase();
    if (typeof db === 'string') return { row: sqlite, more: [notMeasured('webhooks-pg', 'events/s', db)] };
    try {
      return { row: sqlite, more: [rowOf('webhooks-pg', (await run({ DATABASE_URL: db.url })).result)] };
    } finally {
      await db.drop();
    }
  },
};
