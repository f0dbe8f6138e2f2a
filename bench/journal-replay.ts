/**
 * A restart after a kill that left a large click backlog in the journal (the embedded engine: CLICK_QUEUE_LIMIT's
 * default lets a million clicks wait). Compiled server (`npm run build` first):
 *
 *   node --import tsx bench/journal-replay.ts
 *
 * 1. A DATA_DIR with LINKS links (default 100,000), and CLICKS clicks (default 1,000,000) left in journal
 *    segments of the size the server writes (16 MB), as a killed process leaves them: no mark, nothing written.
 * 2. The server starts on it; measured from the spawn: the first answered redirect, and the replay's end (its
 *    log line).
 * 3. Redirects over random codes (10 connections) while the replay runs, then as long again after it: req/s and
 *    latency in each, and the ratio.
 * 4. SIGTERM; the click records must equal the clicks left behind plus the redirects answered, each once.
 *
 * Prints a table and one JSON line. Env: LINKS, CLICKS, CONNECTIONS, SERVER (default dist/src/server.js).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { LoadResult, LoadSpec } from './load.js';
import { redirectCount } from './lib/drive.js';
import { latencyOf } from './lib/latency.js';
import { freePort, peakRssBytes, ROOT, runJson, SERVER_NODE_FLAGS } from './lib/proc.js';
import { openMigrated, seedLinks, writeLeftOverJournal } from './lib/seed.js';

const LINKS = Number(process.env.LINKS ?? 100_000);
const CLICKS = Number(process.env.CLICKS ?? 1_000_000);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 10);
const SERVER = process.env.SERVER ?? 'dist/src/server.js';
const REPLAYED = 'click journal replayed: clicks the database lacked are written';

const dir = mkdtempSync(path.join(tmpdir(), 'ferry-replay-'));
try {
  // 1. Links, and the journal a killed process left.
  const storage = await openMigrated(dir);
  const now = Date.now();
  const links = seedLinks(storage, LINKS, now);
  const ids = storage.sqlite.prepare('select id, short_code from links').all() as Array<{
    id: number;
    short_code: string;
  }>;
  await storage.close();
  const agents = Array.from(
    { length: 30 },
    (_, i) =>
      `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${100 + i}.0 Safari/537.36`,
  );
  writeLeftOverJournal(dir, CLICKS, (i) => {
    const link = ids[Math.floor(Math.random() * ids.length)]!;
    const ip = `198.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    return {
      linkId: link.id,
      shortCode: link.short_code,
      clickedAt: now - 60_000 + Math.floor(i / 100),
      ip,
      userAgent: agents[i % 30]!,
      referrer: null,
    };
  });
  const codesFile = path.join(dir, 'codes.txt');
  writeFileSync(codesFile, links.map(([code]) => code).join('\n'));

  // 2. The restart.
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, SERVER], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      DATA_DIR: dir,
      PORT: String(port),
      LOG_LEVEL: 'info',
      REDIRECT_RATE_LIMIT_PER_MINUTE: '10000000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let replayedAt: number | null = null;
  let replayLog: Record<string, unknown> | null = null;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (!line.includes(REPLAYED)) return;
    replayedAt = performance.now();
    replayLog = JSON.parse(line) as Record<string, unknown>;
  });
  let answeredAt: number | null = null;
  for (let i = 0; answeredAt === null; i += 1) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    const res = await fetch(`${url}/${links[0]![0]}`, { redirect: 'manual' }).catch(() => null);
    if (res?.status === 302) answeredAt = performance.now();
    else await new Promise((resolve) => setTimeout(resolve, 20));
    if (i > 6_000) throw new Error('no redirect answered in 2 minutes');
  }

  // 3. Redirects while the replay runs, in slices of 2 s until it has ended, then as long again after it.
  const load = async (seconds: number): Promise<LoadResult> => {
    const spec: LoadSpec = { url, connections: CONNECTIONS, duration: seconds, workload: 'codes', codesFile };
    const { result } = await runJson<LoadResult>(['--import', 'tsx', 'bench/load.ts', JSON.stringify(spec)], {});
    return result;
  };
  const during: LoadResult[] = [];
  while (replayedAt === null && during.length < 120) during.push(await load(2));
  const duringSeconds = during.reduce((s, r) => s + r.seconds, 0);
  const after = await load(Math.max(2, Math.round(duringSeconds)));

  // 4. Stop, and count (the server's own count of answered redirects: a load generator stopped mid-request
  // does not see the answers then in flight, which the server did count).
  const answered = (await redirectCount({ child, port, url }))!;
  const exited = once(child, 'exit');
  const rss = peakRssBytes(child.pid);
  child.kill('SIGTERM');
  await exited;
  const check = await openMigrated(dir);
  const records = Number((check.sqlite.prepare('select count(*) as n from clicks').get() as { n: number }).n);
  const counted = Number((check.sqlite.prepare('select sum(click_count) as n from links').get() as { n: number }).n);
  await check.close();

  const ms = (t: number | null) => (t === null ? null : Math.round(t - started));
  const duringRate = during.reduce((s, r) => s + r.requests, 0) / Math.max(duringSeconds, 1e-9);
  const worstP99 = during.length === 0 ? null : Math.max(...during.map((r) => r.latencyMs.p99));
  const duringLatency = latencyOf(during.map((r) => r.histogram));
  const summary = {
    links: LINKS,
    leftBehind: CLICKS,
    firstRedirectMs: ms(answeredAt),
    replayEndedMs: ms(replayedAt),
    replay: replayLog,
    duringReqPerSec: Math.round(duringRate),
    duringP50Ms: duringLatency.p50,
    duringP99Ms: duringLatency.p99,
    duringWorstP99Ms: worstP99,
    afterReqPerSec: Math.round(after.reqPerSec),
    afterP99Ms: after.latencyMs.p99,
    duringOverAfter: Number((duringRate / after.reqPerSec).toFixed(2)),
    answered,
    records,
    counted,
    exact: records === CLICKS + answered && counted === records,
    peakRssMb: rss === null ? null : Math.round(rss / 2 ** 20),
  };
  process.stdout.write(`${CLICKS} clicks left behind over ${LINKS} links; restart of ${SERVER}\n`);
  process.stdout.write(`  first redirect answered   ${summary.firstRedirectMs} ms after the spawn\n`);
  process.stdout.write(`  replay ended              ${summary.replayEndedMs} ms after the spawn\n`);
  process.stdout.write(
    `  redirects during replay   ${summary.duringReqPerSec} req/s, p50 ${summary.duringP50Ms} ms, p99 ${summary.duringP99Ms} ms, worst 2-s p99 ${worstP99} ms (${during.length} slices)\n`,
  );
  process.stdout.write(`  p99 per 2-s slice during  ${during.map((r) => r.latencyMs.p99).join(' ')} ms\n`);
  process.stdout.write(
    `  redirects after it        ${summary.afterReqPerSec} req/s, p99 ${summary.afterP99Ms} ms  (during/after ${summary.duringOverAfter} x)\n`,
  );
  process.stdout.write(
    `  click records             ${records} = ${CLICKS} left behind + ${answered} answered: ${summary.exact ? 'exact' : 'NOT EXACT'}; peak RSS ${summary.peakRssMb} MB\n`,
  );
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  if (!summary.exact) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
