/**
 * An import must never hold the instance (SPEC §25): the redirect's and the API's latency while a large import
 * runs from a slow source, against the same server idle, in one run:
 *
 *   npm run build && node --import tsx bench/import-load.ts
 *
 * The compiled server on the embedded database (or TARGET_DATABASE_URL) serves a steady load — RATE requests a
 * second of GET /<code> with a browser's user agent, then RATE of GET /api/v1/links/<code> as its owner — in
 * windows of WINDOW seconds: idle, then while `POST /api/v1/imports` brings LINKS links with VISITS visits in
 * all from a Shlink stand-in (in this process) that waits DELAY_MS before each answer, then idle again. The
 * table compares each load's p99 during the import with its idle p99 (the windows before and after merged);
 * /readyz is asked every 200 ms throughout, and every answer that was not 200 is counted.
 *
 * Env: LINKS (1000), VISITS (1000000), DELAY_MS (20), RATE (500), WINDOW (5 s), CONNECTIONS (10),
 * TARGET_DATABASE_URL. Prints a table and one JSON line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { load, type Workload } from './lib/drive.js';
import { latencyOf } from './lib/latency.js';
import { SERVER_ARGS, startServer, stopServer, type Server } from './lib/proc.js';
import type { LoadResult } from './load.js';

const LINKS = Number(process.env.LINKS ?? 1000);
const VISITS = Number(process.env.VISITS ?? 1_000_000);
const DELAY_MS = Number(process.env.DELAY_MS ?? 20);
const RATE = Number(process.env.RATE ?? 500);
const WINDOW = Number(process.env.WINDOW ?? 5);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 10);
const TARGET = process.env.TARGET_DATABASE_URL;
const API_KEY = 'bench-shlink-key';
const BROWSER =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const PAGE = 1000;
const log = (line: string) => process.stderr.write(`${line}\n`);

/** Link k's visits: VISITS / LINKS of them, a second apart, newest first in pages as Shlink answers. */
function visitsPage(k: number, page: number) {
  const per = Math.floor(VISITS / LINKS);
  const start = Date.UTC(2020, 0, 1) + k * per * 1000;
  const from = (page - 1) * PAGE;
  const data = Array.from({ length: Math.max(0, Math.min(PAGE, per - from)) }, (_, i) => ({
    referer: i % 3 === 0 ? 'https://news.example.com/' : null,
    date: new Date(start + (per - 1 - from - i) * 1000).toISOString(),
    userAgent: BROWSER,
    visitLocation: { countryCode: 'DE' },
    potentialBot: false,
  }));
  return {
    visits: {
      data,
      pagination: {
        currentPage: page,
        pagesCount: Math.max(1, Math.ceil(per / PAGE)),
        itemsPerPage: PAGE,
        itemsInCurrentPage: data.length,
        totalItems: per,
      },
    },
  };
}

/** A Shlink stand-in that waits DELAY_MS before each answer. */
async function slowShlink(): Promise<{ server: HttpServer; url: string }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    const page = Number(url.searchParams.get('page') ?? 1);
    let body: unknown = null;
    if (url.pathname === '/rest/v3/short-urls') {
      const size = Number(url.searchParams.get('itemsPerPage') ?? 10);
      const data = Array.from({ length: Math.max(0, Math.min(size, LINKS - (page - 1) * size)) }, (_, i) => {
        const k = (page - 1) * size + i;
        return {
          shortCode: `imp${k}`,
          longUrl: `https://example.com/imported/${k}`,
          dateCreated: '2020-01-01T00:00:00+00:00',
          tags: [],
          meta: {},
          domain: null,
          title: `Imported ${k}`,
        };
      });
      body = { shortUrls: { data, pagination: { currentPage: page, pagesCount: Math.ceil(LINKS / size) } } };
    } else {
      const m = /^\/rest\/v3\/short-urls\/imp(\d+)\/visits$/.exec(url.pathname);
      if (m) body = visitsPage(Number(m[1]), page);
    }
    setTimeout(() => {
      res.writeHead(body === null ? 404 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body ?? { error: 'not found' }));
    }, DELAY_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** /readyz every 200 ms until stopped: how many answers were not 200. */
function watchReadiness(server: Server) {
  let asked = 0;
  let notReady = 0;
  const timer = setInterval(() => {
    asked += 1;
    fetch(`${server.url}/readyz`).then(
      (r) => {
        if (r.status !== 200) notReady += 1;
      },
      () => {
        notReady += 1;
      },
    );
  }, 200);
  return {
    stop: () => {
      clearInterval(timer);
      return { asked, notReady };
    },
  };
}

async function json(
  server: Server,
  pathname: string,
  init: RequestInit & { token?: string } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
  };
  const res = await fetch(`${server.url}${pathname}`, { ...init, headers });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
}

async function main(): Promise<void> {
  const work = mkdtempSync(path.join(tmpdir(), 'ferry-import-load-'));
  const source = await slowShlink();
  const server = await startServer(
    'import-load',
    [...SERVER_ARGS],
    {
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATA_DIR: work,
      JWT_SECRET: 'bench-secret-that-is-at-least-32-bytes-long',
      ADMIN_USERNAME: 'bench-admin',
      ADMIN_PASSWORD: 'bench-admin-password',
      RATE_LIMIT_PER_MINUTE: '1000000',
      REDIRECT_RATE_LIMIT_PER_MINUTE: '10000000',
      ...(TARGET ? { DATABASE_URL: TARGET } : {}),
    },
    { readyLog: 'schema compilers warmed' },
  );
  try {
    const token = (
      await json(server, '/api/v1/tokens', {
        method: 'POST',
        body: JSON.stringify({ username: 'bench-admin', password: 'bench-admin-password' }),
      })
    ).body.accessToken as string;
    const link = await json(server, '/api/v1/links', {
      method: 'POST',
      token,
      body: JSON.stringify({ original_url: 'https://example.com/hot', short_code: 'hot' }),
    });
    if (link.status !== 201) throw new Error(`link: ${link.status}`);
    const ctx = { connections: CONNECTIONS, warmup: 0, duration: WINDOW, rounds: 1 };
    const loads: Record<'redirect' | 'api', Workload> = {
      redirect: { workload: 'path', path: '/hot', headers: { 'user-agent': BROWSER }, rate: RATE },
      api: { workload: 'path', path: '/api/v1/links/hot', headers: { authorization: `Bearer ${token}` }, rate: RATE },
    };
    const windows = {
      idle: { redirect: [] as LoadResult[], api: [] as LoadResult[] },
      importing: { redirect: [] as LoadResult[], api: [] as LoadResult[] },
    };
    const measure = async (phase: 'idle' | 'importing') => {
      for (const name of ['redirect', 'api'] as const)
        windows[phase][name].push(await load(ctx, server, loads[name], WINDOW));
    };
    await load(ctx, server, loads.redirect, 2); // warm-up
    await measure('idle');
    const readiness = watchReadiness(server);
    const started = await json(server, '/api/v1/imports', {
      method: 'POST',
      token,
      body: JSON.stringify({ source: 'shlink', url: source.url, api_key: API_KEY }),
    });
    const jobUrl = `/api/v1/imports/${String(started.body.id)}`;
    const began = Date.now();
    let job = started.body;
    while (job.state === 'running') {
      await measure('importing');
      job = (await json(server, jobUrl, { token })).body;
      log(`import: ${JSON.stringify(job.progress)} after ${Math.round((Date.now() - began) / 1000)} s`);
    }
    const seconds = (Date.now() - began) / 1000;
    const ready = readiness.stop();
    await measure('idle');
    report(windows, { job, seconds, ready });
  } finally {
    await stopServer(server.child);
    source.server.close();
    rmSync(work, { recursive: true, force: true });
  }
}

function report(
  windows: Record<'idle' | 'importing', Record<'redirect' | 'api', LoadResult[]>>,
  run: { job: Record<string, unknown>; seconds: number; ready: { asked: number; notReady: number } },
): void {
  const p = (results: LoadResult[]) => latencyOf(results.map((r) => r.histogram));
  const statuses = (results: LoadResult[]) =>
    results.flatMap((r) => Object.entries(r.statuses)).filter(([s]) => !['200', '302'].includes(s));
  const rows = (['redirect', 'api'] as const).map((name) => {
    const idle = p(windows.idle[name]);
    const busy = p(windows.importing[name]);
    return {
      name,
      idleP50: idle.p50,
      idleP99: idle.p99,
      importP50: busy.p50,
      importP99: busy.p99,
      ratio: busy.p99 / idle.p99,
      other: statuses([...windows.idle[name], ...windows.importing[name]]),
    };
  });
  const lines = [
    `import of ${LINKS} links with ${VISITS} visits from a source answering after ${DELAY_MS} ms: ${run.job.state} in ${run.seconds.toFixed(1)} s (${JSON.stringify(run.job.progress)})`,
    `/readyz asked ${run.ready.asked} times during the import: ${run.ready.notReady} answers not 200`,
    '',
    `| load (${RATE}/s, ${CONNECTIONS} connections) | idle p50 ms | idle p99 ms | importing p50 ms | importing p99 ms | p99 importing / idle |`,
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.idleP50.toFixed(2)} | ${r.idleP99.toFixed(2)} | ${r.importP50.toFixed(2)} | ${r.importP99.toFixed(2)} | **${r.ratio.toFixed(2)}×** |`,
    ),
    ...rows.filter((r) => r.other.length).map((r) => `${r.name}: unexpected statuses ${JSON.stringify(r.other)}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n${JSON.stringify({ rows, ...run })}\n`);
}

main().catch((err: unknown) => {
  log(`import-load failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
