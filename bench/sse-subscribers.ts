/**
 * `redirect-sse-1000` (SPEC §22, issue 40's must-show): "1,000 concurrent SSE subscribers on one instance cost
 * under 100 MB of extra RSS and do not slow the redirect by more than 5 %", measured from outside.
 *
 * The data: the 100,000 links of links100k spread over 1,000 users (link id mod 1,000), the users made through the
 * API of a server started for it. Two servers on copies of it, as bench/hook-cost.ts: `redirect-sse-idle` has no
 * subscriber; `redirect-sse-1000` has 1,000 open `GET /api/v1/events` streams, one per user (each user's token
 * from POST /api/v1/tokens), held by bench/lib/sse-clients.ts in a process of its own that reads every byte and
 * counts the messages. Each browser visit's `link.clicked` thus goes to one of the 1,000 streams, and the hub
 * offers each event to all 1,000. Browser visits to random codes, caches warmed by a pass over every code,
 * alternating rounds (twice the run's rounds and duration); the row's ratio is to the idle server's rounds
 * (target: >= 0.95). Before each round both servers' clicks are stored (counted in their databases) and the
 * streams have caught up with them (the wait is noted); the streams' count of `link.clicked` is checked against
 * the clicks answered since they opened.
 *
 * Memory, from /proc/<pid>/status: each server's VmRSS with no subscriber (after the warm-up and the same 1,000
 * logins on both), again 3 s after the 1,000 streams opened, after each round (logged, with V8's heap in use from
 * /metrics) and at the end; VmHWM at the end. Extra RSS (target: < 100 MB) is the larger of the watched server's
 * growth on connecting and its peak over the twin's (the twins differ by some tens of MB alike: see the notes).
 * The subscribers' process shares the machine's cores: its CPU over the loaded rounds is noted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SqliteDatabase as Database } from '../src/db/sqlite-driver.js';
import { clickCheck, load, redirectCount, rowOf, slice, type Slice, type Workload } from './lib/drive.js';
import { cpuSeconds, peakRssBytes, ROOT, rssBytes, stopServer, type Server } from './lib/proc.js';
import type { Row } from './lib/report.js';
import type { SseStats } from './lib/sse-clients.js';
import { ADMIN } from './lib/instance.js';
import { BROWSER_UA, profileOf, startFerry, type BenchContext, type Scenario } from './scenarios.js';

const SUBSCRIBERS = 1_000;
/** The servers' own environment: 1,000 logins from one address (POST /api/v1/tokens is 10 a minute by default). */
const ENV = { TOKEN_RATE_LIMIT_PER_MINUTE: '1000000' };
const PASSWORD = 'sse-bench-password';
const usernameOf = (i: number): string => `sse-${i}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number): string => (bytes / 1048576).toFixed(1);

async function call(server: Server, p: string, body: unknown, token?: string): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${server.url}${p}`, { method: 'POST', headers, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`POST ${p}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** `task(0 .. count - 1)`, `atOnce` at a time (the server hashes passwords a few at once). */
async function each(count: number, atOnce: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: atOnce }, worker));
}

/**
 * links100k with 1,000 active users, made by the admin through a server started for it, and the links spread over
 * them once it has stopped (link id mod 1,000: every user a hundred random codes; the triggers keep the owners'
 * totals). Answers the database file.
 */
async function ownedLinks(ctx: BenchContext): Promise<string> {
  const started = performance.now();
  const setup = await startFerry(ctx, 'sse-setup', 'links100k');
  const admin = String((await call(setup, '/api/v1/tokens', ADMIN)).accessToken);
  await each(SUBSCRIBERS, 8, async (i) => {
    const user = { username: usernameOf(i), email: `${usernameOf(i)}@example.com`, password: PASSWORD };
    await call(setup, '/api/v1/users', { ...user, status: 'active' }, admin);
  });
  const made = performance.now();
  const exitCode = await stopServer(setup.child);
  if (exitCode !== 0) throw new Error(`sse-setup exited with ${exitCode}`);
  const file = path.join(setup.dataDir, 'ferry.db');
  const db = new Database(file);
  const owner = `(select id from users where username_lower = 'sse-' || (links.id % ${SUBSCRIBERS}))`;
  const { changes } = db.prepare(`update links set user_id = ${owner}`).run();
  db.close();
  const seconds = (from: number, to: number) => ((to - from) / 1000).toFixed(1);
  ctx.log(
    `   ${SUBSCRIBERS} users made in ${seconds(started, made)} s (server start included), ${changes} links ` +
      `given to them in ${seconds(made, performance.now())} s`,
  );
  return file;
}

/** Each user's access token (POST /api/v1/tokens). */
async function tokensOf(server: Server): Promise<string[]> {
  const tokens: string[] = [];
  await each(SUBSCRIBERS, 8, async (i) => {
    tokens[i] = String(
      (await call(server, '/api/v1/tokens', { username: usernameOf(i), password: PASSWORD })).accessToken,
    );
  });
  return tokens;
}

interface Subscribers {
  child: ChildProcess;
  /** as they were once every stream had answered */
  connected: SseStats;
  stats(): Promise<SseStats>;
  close(): Promise<void>;
}

/** bench/lib/sse-clients.ts with one stream per token; resolves once every stream has answered. */
async function subscribe(ctx: BenchContext, server: Server, tokens: string[]): Promise<Subscribers> {
  const tokensFile = path.join(ctx.work, 'sse-tokens.json');
  writeFileSync(tokensFile, JSON.stringify(tokens));
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/lib/sse-clients.ts', JSON.stringify({ url: server.url, tokensFile })],
    { cwd: ROOT, env: { PATH: process.env.PATH }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const reply = (type: string) =>
    new Promise<SseStats>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`sse-clients exited with ${code}`));
      const onMessage = (m: SseStats & { type: string }) => {
        if (m.type !== type) return;
        child.off('message', onMessage).off('exit', onExit);
        resolve(m);
      };
      child.on('message', onMessage).once('exit', onExit);
    });
  const connected = await reply('connected');
  return {
    child,
    connected,
    stats: () => {
      const answer = reply('stats');
      child.send('stats');
      return answer;
    },
    close: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.send('close');
      await exited;
    },
  };
}

/** Until the streams have brought `expected` link.clicked events, or `ms` pass; answers the last counts. */
async function clickedWithin(subs: Subscribers, expected: number, ms: number): Promise<SseStats> {
  const deadline = Date.now() + ms;
  for (;;) {
    const stats = await subs.stats();
    if (stats.clicked >= expected || Date.now() >= deadline) return stats;
    await sleep(200);
  }
}

/**
 * Until every click the server has answered is stored with its `link.clicked` event (counted in its database, read
 * only), or `ms` pass: its click queue's depth is 0 while its last batch is still being written.
 */
async function clicksStored(server: Server & { dataDir: string }, ms = 120_000): Promise<number> {
  const deadline = Date.now() + ms;
  for (;;) {
    const served = (await redirectCount(server)) ?? 0;
    const db = new Database(path.join(server.dataDir, 'ferry.db'), { readonly: true });
    const query = "select count(*) as n from events where type = 'link.clicked'";
    const stored = (db.prepare(query).get() as { n: number }).n;
    db.close();
    if (stored >= served || Date.now() >= deadline) return stored;
    await sleep(200);
  }
}

/** VmRSS of each server now (0 when /proc cannot be read), and V8's heap in use as its /metrics tells. */
async function memoryOf(servers: Server[]): Promise<Array<{ rss: number; heap: number }>> {
  return Promise.all(
    servers.map(async (s) => {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith('nodejs_heap_size_used_bytes '));
      return { rss: rssBytes(s.child.pid) ?? 0, heap: line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0 };
    }),
  );
}

type Reading = { rss: number; heap: number };

interface Memory {
  /** [watched, idle]: with no subscriber, 3 s after the streams opened, after the rounds; VmHWM (`rss`) at the end */
  before: Reading[];
  connected: Reading[];
  after: Reading[];
  peak: Reading[];
}

/**
 * The memory figures of the watched server's notes, and the extra RSS the target is judged on: the larger of the
 * growth on connecting (the streams idle) and its peak over the twin's (the streams busy under the load).
 */
function memoryNote(m: Memory): { note: string; extra: number } {
  const [w, t] = [0, 1].map((i) => ({ before: m.before[i]!, connected: m.connected[i]!, after: m.after[i]! }));
  const onConnect = w!.connected.rss - w!.before.rss;
  const overTwin = m.peak[0]!.rss - m.peak[1]!.rss;
  const signed = (bytes: number) => `${bytes >= 0 ? '+' : ''}${mb(bytes)}`;
  const series = (r: typeof w) => `${mb(r!.before.rss)} → ${mb(r!.connected.rss)} → ${mb(r!.after.rss)} MB`;
  const heaps = (r: typeof w) => `${mb(r!.before.heap)} → ${mb(r!.connected.heap)} → ${mb(r!.after.heap)}`;
  const note =
    `RSS with no subscriber → 3 s after ${SUBSCRIBERS} connected → after the rounds: ${series(w)} ` +
    `(${signed(onConnect)} MB on connecting; V8 heap used ${heaps(w)} MB); the idle twin at the same moments ` +
    `${series(t)} (heap ${heaps(t)} MB); peak (VmHWM) ${mb(m.peak[0]!.rss)} MB vs the twin's ` +
    `${mb(m.peak[1]!.rss)} MB (${signed(overTwin)} MB)`;
  return { note, extra: Math.max(onConnect, overTwin) };
}

/** The streams' part of the notes: how many opened, what they brought, what it took. */
function streamNote(subs: Subscribers, last: SseStats, expected: number, waitMs: number, clientCpu: number): string {
  const { open, refused } = subs.connected;
  const refusals = Object.entries(refused).map(([why, n]) => `${n}× ${why}`);
  const ended = Object.entries(last.ended).map(([why, n]) => `${n}× ${why}`);
  return [
    `${open} of ${SUBSCRIBERS} streams opened${refusals.length ? ` (**refused: ${refusals.join(', ')}**)` : ''}` +
      ` (the slowest in ${subs.connected.slowestOpenMs.toFixed(0)} ms), ${last.open} open at the end` +
      (ended.length ? ` (**ended by the server: ${ended.join(', ')}**)` : ''),
    `${last.clicked.toLocaleString('en-US')} of ${expected.toLocaleString('en-US')} link.clicked events received ` +
      `(${last.events.toLocaleString('en-US')} events, ${last.heartbeats} heartbeats, ${mb(last.bytes)} MB read); ` +
      `${(waitMs / 1000).toFixed(1)} s waited for them between rounds`,
    `the subscribers' process used ${clientCpu.toFixed(2)} CPU s during the loaded rounds`,
  ].join('; ');
}

type Running = { name: string; server: Server & { dataDir: string }; slices: Slice[] };

/**
 * The alternating rounds (as bench/hook-cost.ts: twice the run's rounds, each server first in turn). Before each,
 * both servers' clicks are stored and the streams have caught up, so that no round pays for another's work.
 * Answers the streams' counts once caught up after the last round, the time waited for them and the subscribers'
 * CPU over the watched server's rounds.
 */
async function alternate(ctx: BenchContext, running: Running[], spec: Workload, subs: Subscribers, from: number) {
  const watched = running[1]!.server;
  const expected = async () => ((await redirectCount(watched)) ?? 0) - from;
  let waitMs = 0;
  let clientCpu = 0;
  const settled = async (): Promise<SseStats> => {
    for (const c of running) await clicksStored(c.server);
    const started = Date.now();
    const stats = await clickedWithin(subs, await expected(), 120_000);
    waitMs += Date.now() - started;
    return stats;
  };
  for (let r = 0; r < ctx.rounds * 2; r += 1) {
    for (let i = 0; i < running.length; i += 1) {
      const c = running[(r + i) % running.length]!;
      await settled();
      const cpuBefore = cpuSeconds(subs.child.pid) ?? 0;
      const round = await slice(ctx, c.server, spec, ctx.duration / ctx.rounds);
      c.slices.push(round);
      if (c.server === watched) clientCpu += (cpuSeconds(subs.child.pid) ?? 0) - cpuBefore;
      const [w, idle] = await memoryOf([watched, running[0]!.server]);
      ctx.log(
        `   round ${r + 1} ${c.name}: ${Math.round(round.result.reqPerSec)} req/s; RSS (heap used) ` +
          `redirect-sse-1000 ${mb(w!.rss)} (${mb(w!.heap)}) MB, redirect-sse-idle ${mb(idle!.rss)} (${mb(idle!.heap)}) MB`,
      );
    }
  }
  const last = await settled();
  return { last, expected: await expected(), waitMs, clientCpu };
}

/** The rows: the watched server's with the streams' and the memory's notes, × the idle one's rounds. */
async function rowsOf(running: Running[], extra: { notes: string[]; memory: Memory; bytes: number; open: number }) {
  const rows: Row[] = [];
  for (const [i, c] of running.entries()) {
    const served = await redirectCount(c.server);
    // The records are counted once the server has stopped (SIGTERM writes what it had queued).
    const exitCode = await stopServer(c.server.child);
    const watched = i === 1;
    const notes = [clickCheck(c.server.dataDir, served), ...(watched ? extra.notes : [])];
    const setup = watched
      ? `as redirect-browser on 1,000 users' links, ${SUBSCRIBERS} GET /api/v1/events streams open (one per user); × redirect-sse-idle of the same rounds`
      : `as redirect-browser on 1,000 users' links, no event stream; rounds alternating with redirect-sse-1000`;
    const peakRss = extra.memory.peak[watched ? 0 : 1]!.rss || null;
    const row = rowOf(c.name, setup, c.slices, {
      expected: 302,
      notes,
      peakRss,
      exitCode,
      ...(watched ? { baseline: running[0]!.slices } : {}),
    });
    rows.push(watched ? { ...row, extraRssBytes: extra.bytes, subscribers: extra.open } : row);
  }
  return rows;
}

async function sseCost(ctx: BenchContext): Promise<{ row: Row; more: Row[]; profile?: string }> {
  const spec: Workload = {
    workload: 'codes',
    codesFile: ctx.data.files.links100k!.codes,
    headers: { 'user-agent': BROWSER_UA },
  };
  const owned = await ownedLinks(ctx);
  const copy = (file: string) => copyFileSync(owned, file);
  const running: Running[] = [];
  let subs: Subscribers | null = null;
  try {
    for (const name of ['redirect-sse-idle', 'redirect-sse-1000'])
      running.push({ name, server: await startFerry(ctx, name, null, ENV, copy), slices: [] });
    const servers = [running[1]!.server, running[0]!.server]; // [watched, idle]
    for (const c of running) await load(ctx, c.server, { ...spec, amount: 100_000 }, ctx.warmup);
    // The same logins on both, so that their memory differs by the streams alone.
    const tokens = await tokensOf(servers[0]!);
    await tokensOf(servers[1]!);
    for (const c of running) await clicksStored(c.server);
    await sleep(2_000);
    const before = await memoryOf(servers);
    // Clicks stored before the first stream opened are no news to it (the hub's cursor starts at the end).
    const from = await clicksStored(servers[0]!);
    subs = await subscribe(ctx, servers[0]!, tokens);
    await sleep(3_000);
    const connected = await memoryOf(servers);
    ctx.log(
      `   RSS ${mb(before[0]!.rss)} MB with no subscriber, ${mb(connected[0]!.rss)} MB with ${subs.connected.open}`,
    );
    const { last, expected, waitMs, clientCpu } = await alternate(ctx, running, spec, subs, from);
    const peak = servers.map((s) => ({ rss: peakRssBytes(s.child.pid) ?? 0, heap: 0 }));
    const memory: Memory = { before, connected, after: await memoryOf(servers), peak };
    const streams = streamNote(subs, last, expected, waitMs, clientCpu);
    await subs.close();
    const { note, extra } = memoryNote(memory);
    ctx.log(`   ${note}`);
    const rows = await rowsOf(running, { notes: [streams, note], memory, bytes: extra, open: subs.connected.open });
    // With --profile: the watched server's main thread and busiest other thread over its rounds.
    const profile = profileOf(ctx, 'redirect-sse-1000', running[1]!.slices);
    return { row: rows[1]!, more: [rows[0]!], ...(profile ? { profile } : {}) };
  } finally {
    // A failed run leaves no process behind.
    for (const child of [subs?.child, ...running.map((c) => c.server.child)])
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

export const redirectSse: Scenario = {
  name: 'redirect-sse-1000',
  needs: ['links100k'],
  describe: () =>
    `GET /{code}, 100,000 links of 1,000 users, browser visits, with ${SUBSCRIBERS} live event streams against none, alternating rounds`,
  run: sseCost,
};
