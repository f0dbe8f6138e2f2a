/**
 * node --expose-gc --import tsx bench/link-cache-bytes.ts [entries=200000] [misses] — what a cached link costs in the heap:
 * the heap's growth per entry of a LinkCache filled as the redirect fills it (a code's 8 characters, a URL of
 * the bench's shape as SQLite returns it, a fast-path visit of each), against entryBytes' estimate.
 */
import { LinkCache, entryBytes, type RedirectTarget } from '../src/modules/redirect/link-cache.js';
import { createVisitPolicy } from '../src/modules/redirect/visit-policy.js';

const n = Number(process.argv[2] ?? 200_000);
/** `misses`: cached misses (a code never issued) instead of links */
const misses = process.argv[3] === 'misses';
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const clock = { now: () => Date.now() };
const cache = new LinkCache(clock, { capacity: n, maxBytes: Number.MAX_SAFE_INTEGER, positiveTtlMs: Infinity });
const policy = createVisitPolicy({
  resolver: { cached: (name: string) => cache.get(name), resolve: () => ({ kind: 'missing' }) },
  domains: { servedBy: () => undefined },
  queries: { admitVisit: () => 'admitted', hasVisitsLeft: () => 'admitted' },
  passwords: { verify: async () => true },
  attempts: { take: async () => null, refund: async () => undefined } as never,
  status: 302,
  publicBaseUrl: 'http://localhost:3000',
} as never);
// Fresh strings, as a database row's are (not slices of one another, not interned literals).
const fresh = (s: string) => Buffer.from(s).toString('latin1');
const codes = Array.from({ length: n }, (_, i) => fresh(`c${i.toString(36).padStart(7, '0')}`));
gc();
const before = process.memoryUsage().heapUsed;
let estimated = 0;
for (let i = 0; i < n; i += 1) {
  const code = codes[i]!;
  const target: RedirectTarget = misses
    ? { kind: 'missing' }
    : {
        kind: 'link',
        id: i + 1,
        code: fresh(code),
        alias: null,
        url: fresh(`https://example.com/articles/${i}?utm_source=bench`),
        expiresAt: null,
        rules: null,
        preview: null,
        broken: null,
      };
  cache.set(fresh(code), target, cache.epoch());
  policy.decideFromCache(undefined, code, 'GET', () => {
    throw new Error('a plain link reads no visitor');
  });
  estimated += entryBytes(code, target);
}
gc();
const perEntry = (process.memoryUsage().heapUsed - before) / n;
process.stdout.write(
  `${n} cached ${misses ? 'misses' : 'links'}: ${perEntry.toFixed(0)} bytes of heap each (entryBytes estimates ${(estimated / n).toFixed(0)}), ` +
    `cache size ${cache.size()}; Node ${process.version}\n`,
);
