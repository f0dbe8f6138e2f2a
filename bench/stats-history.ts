/**
 * The statistics of a link with ten years of history (issue 38), by month and by week, as a dashboard asks for
 * them: one request at a time against the compiled server (`npm run build` first):
 *
 *   node --import tsx bench/stats-history.ts
 *
 * 1. One link with 10,000,000 clicks spread over YEARS years (default 10) in its rollups, as the click writer
 *    leaves them: an hourly row per hour (87,600 in ten years) and, per day, 100 values of each top list's kind
 *    (the cap) plus "(other)": about 1.85 million daily value rows (bench/lib/seed.ts seedStatsLink).
 * 2. The compiled server on it; for each request below, its first answer (nothing remembered yet: every row of
 *    the ten years read), then ROUNDS answers in a row after a warm-up of WARMUP_S seconds: p50, p99, max.
 *    Target: interval=month p99 < 20 ms.
 *
 * Prints a table and one JSON line. Env: YEARS, ROUNDS, WARMUP_S.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SERVER_ARGS, startServer, stopServer } from './lib/proc.js';
import { openMigrated, seedStatsLink } from './lib/seed.js';

const YEARS = Number(process.env.YEARS ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 500);
const WARMUP_S = Number(process.env.WARMUP_S ?? 3);
const TARGET_P99_MS = 20;

const REQUESTS: Array<{ name: string; query: string }> = [
  { name: 'month, UTC', query: '?interval=month' },
  { name: 'month, Europe/Berlin', query: '?interval=month&tz=Europe/Berlin' },
  { name: 'all time, unasked (week), UTC', query: '' },
  { name: 'week, America/New_York', query: '?interval=week&tz=America/New_York' },
];

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

async function timed(url: string): Promise<{ ms: number; buckets: number; interval: string }> {
  const started = performance.now();
  const res = await fetch(url);
  const body = (await res.json()) as { timeseries?: unknown[]; interval?: string };
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return { ms, buckets: body.timeseries!.length, interval: body.interval! };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ferry-bench-history-'));
  try {
    const seeding = performance.now();
    const storage = await openMigrated(dir);
    const now = Date.now();
    const days = Math.round(YEARS * 365.25);
    const { code } = seedStatsLink(storage, { totalClicks: 10_000_000, rawClicks: 1_000, days, now });
    await storage.close();
    process.stderr.write(
      `seeded ${YEARS} years (${days} days) of rollups in ${((performance.now() - seeding) / 1000).toFixed(1)} s\n`,
    );
    const server = await startServer(
      'stats-history',
      [...SERVER_ARGS],
      {
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        DATA_DIR: dir,
        RATE_LIMIT_PER_MINUTE: '1000000',
        JWT_SECRET: 'bench-secret-that-is-at-least-32-bytes-long',
      },
      { readyLog: 'schema compilers warmed' },
    );
    const rows = [];
    try {
      for (const r of REQUESTS) {
        const url = `${server.url}/api/v1/links/${code}/stats${r.query}`;
        const first = await timed(url);
        for (const until = performance.now() + WARMUP_S * 1000; performance.now() < until;) await timed(url);
        const times: number[] = [];
        for (let i = 0; i < ROUNDS; i += 1) times.push((await timed(url)).ms);
        times.sort((a, b) => a - b);
        rows.push({
          name: r.name,
          query: r.query,
          interval: first.interval,
          buckets: first.buckets,
          firstMs: first.ms,
          p50: percentile(times, 0.5),
          p99: percentile(times, 0.99),
          max: times[times.length - 1]!,
        });
      }
    } finally {
      await stopServer(server.child);
    }
    const f = (n: number) => n.toFixed(2);
    process.stdout.write(
      `\n| request (GET /links/{code}/stats, ${YEARS} years of rollups) | interval | buckets | first answer ms | p50 ms | p99 ms | max ms |\n|---|---|---:|---:|---:|---:|---:|\n`,
    );
    for (const r of rows)
      process.stdout.write(
        `| ${r.name} \`${r.query || '(no query)'}\` | ${r.interval} | ${r.buckets} | ${f(r.firstMs)} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.max)} |\n`,
      );
    const month = rows[0]!;
    process.stdout.write(
      `\ntarget: interval=month p99 < ${TARGET_P99_MS} ms (one request at a time): ${month.p99 < TARGET_P99_MS ? 'met' : 'NOT met'} (${f(month.p99)} ms, ${f(month.p99 / TARGET_P99_MS)} of the target)\n`,
    );
    process.stdout.write(`${JSON.stringify({ years: YEARS, rounds: ROUNDS, rows })}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
