/**
 * The load generator of bench/run.ts, in its own process: autocannon (the library) against one server,
 * with latencies recorded here at full resolution (autocannon's own histogram keeps whole milliseconds
 * and only records 2xx answers, which leaves a redirect's latency out).
 *
 *   node --import tsx bench/load.ts '<LoadSpec as JSON>'
 *
 * Prints one JSON line (LoadResult). Workloads:
 * - `codes`: GET /<code>, a uniformly random code of `codesFile` (one code per line) per request; a line
 *   `<code> <host>` sends that Host (a link on a domain of its own);
 * - `path`: GET `path` with `headers` (a hot link, a user read, the stats of one link);
 * - `create-link`: POST /api/v1/links with a new original_url per request;
 * - `create-order`: POST /api/v1/orders with a new Idempotency-Key per request.
 */
import { readFileSync } from 'node:fs';
import autocannon, { type RawRequest } from 'autocannon';
import { bucketOf, latencyOf, type Latency } from './lib/latency.js';

export interface LoadSpec {
  url: string;
  connections: number;
  /** seconds */
  duration: number;
  /** instead of a duration: this many requests; with `codes`, each code once in file order (a cache warm-up pass) */
  amount?: number;
  /** requests per second over all connections (an open load at a steady rate); default: as fast as answered */
  rate?: number;
  workload: 'codes' | 'path' | 'create-link' | 'create-order';
  codesFile?: string;
  path?: string;
  headers?: Record<string, string>;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  reqPerSec: number;
  /** answers per HTTP status */
  statuses: Record<string, number>;
  /** connection errors and timeouts */
  errors: number;
  latencyMs: Latency;
  /** the latencies as a histogram (latencyBucket), so that runs can be merged */
  histogram: Record<string, number>;
  /**
   * When the load ran, in µs of this machine's monotonic clock (process.hrtime): the clock of V8's CPU
   * profiles, so that a server's profile can be cut to the measured run (profile-summary.ts).
   */
  window: [number, number];
}

function requestsFor(spec: LoadSpec): NonNullable<Parameters<typeof autocannon>[0]['requests']> {
  const tag = `${process.pid}-${Date.now().toString(36)}`;
  let n = 0;
  switch (spec.workload) {
    case 'codes': {
      const lines = readFileSync(spec.codesFile!, 'utf8').split('\n').filter(Boolean);
      const pick = spec.amount ? () => n++ % lines.length : () => Math.floor(Math.random() * lines.length);
      if (lines[0]?.includes(' ')) {
        const visits = lines.map((line) => line.split(' ')).map(([code, host]) => ({ path: `/${code}`, host: host! }));
        // autocannon's request builder hands each call fresh copies of the request and its headers: set in place.
        return [
          {
            method: 'GET',
            setupRequest: (req: RawRequest) => {
              const v = visits[pick()]!;
              req.path = v.path;
              const headers = req.headers ?? {};
              headers.host = v.host;
              req.headers = headers;
              return req;
            },
          },
        ];
      }
      const codes = lines.map((c) => `/${c}`);
      return [{ method: 'GET', setupRequest: (req: RawRequest) => ((req.path = codes[pick()]), req) }];
    }
    case 'path':
      return [{ method: 'GET', path: spec.path! }];
    case 'create-link':
      return [
        {
          method: 'POST',
          path: '/api/v1/links',
          setupRequest: (req: RawRequest) => ({
            ...req,
            body: JSON.stringify({ original_url: `https://example.com/bench/${tag}/${n++}` }),
          }),
        },
      ];
    case 'create-order':
      return [
        {
          method: 'POST',
          path: '/api/v1/orders',
          setupRequest: (req: RawRequest) => ({
            ...req,
            headers: { ...req.headers, 'idempotency-key': `bench-${tag}-${n++}` },
            body: JSON.stringify({ itemId: 1 + (n % 1000), quantity: 1 + (n % 5) }),
          }),
        },
      ];
  }
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2]!) as LoadSpec;
  let latencies = new Float64Array(1 << 20);
  let count = 0;
  const statuses: Record<string, number> = {};
  const headers = { 'content-type': 'application/json', ...spec.headers };
  const started = performance.now();
  const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
  const from = monotonicUs();
  const length = spec.amount ? { amount: spec.amount } : { duration: spec.duration };
  const rate = spec.rate ? { overallRate: spec.rate } : {};
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    ...length,
    ...rate,
    headers,
    requests: requestsFor(spec),
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (count === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[count++] = ms;
    statuses[status] = (statuses[status] ?? 0) + 1;
  });
  const result = await instance;
  const window: [number, number] = [from, monotonicUs()];
  const seconds = (performance.now() - started) / 1000;
  const histogram: Record<string, number> = {};
  for (const ms of latencies.subarray(0, count)) {
    const b = bucketOf(ms);
    histogram[b] = (histogram[b] ?? 0) + 1;
  }
  const out: LoadResult = {
    requests: count,
    seconds,
    reqPerSec: count / seconds,
    statuses,
    errors: result.errors + result.timeouts,
    latencyMs: latencyOf([histogram]),
    histogram,
    window,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`load failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
