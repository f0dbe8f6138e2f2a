/**
 * node --expose-gc --import tsx bench/link-cache-bytes.ts [entries=200000] [kind=links] — what a cached name costs in
 * the heap: the heap's growth per entry of a LinkCache filled as the redirect fills it (a code's 8 characters, a URL
 * of the bench's shape as SQLite returns it, a fast-path visit of each), against entryBytes' estimate. `kind`:
 * `links` (each visited by its own code on the default domain), `aliases` (each visited by its alias, an
 * alias of the shape `spring-sale-<n>-2026` that `redirect-names` visits), `domains` (each by its code on a
 * domain of its own), or `misses` (cached misses: a code never issued).
 */
import { LinkCache, entryBytes, linkCacheKey, type RedirectTarget } from '../src/modules/redirect/link-cache.js';
import { createVisitPolicy } from '../src/modules/redirect/visit-policy.js';

const n = Number(process.argv[2] ?? 200_000);
const kind = process.argv[3] ?? 'links';
if (!['links', 'aliases', 'domains', 'misses'].includes(kind)) throw new Error(`unknown kind ${kind}`);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const clock = { now: () => Date.now() };
const cache = new LinkCache(clock, { capacity: n, maxBytes: Number.MAX_SAFE_INTEGER, positiveTtlMs: Infinity });
/** `domains`: every link on the one domain of this host (id 1) */
const HOST = 'go.example.net';
const domainId = kind === 'domains' ? 1 : 0;
const domain = { id: 1, hostname: HOST, scheme: 'https', notFoundRedirect: null, expiredRedirect: null };
const policy = createVisitPolicy({
  resolver: {
    cached: (name: string, id: number) => cache.get(linkCacheKey(id, name)),
    resolve: () => ({ kind: 'missing' }),
  },
  domains: { servedBy: (host: string | undefined) => (host === HOST ? domain : undefined) },
  queries: { admitVisit: () => 'admitted', hasVisitsLeft: () => 'admitted' },
  passwords: { verify: async () => true },
  attempts: { take: async () => null, refund: async () => undefined } as never,
  status: 302,
  publicBaseUrl: 'http://localhost:3000',
} as never);
// Fresh strings, as a database row's are (not slices of one another, not interned literals).
const fresh = (s: string) => Buffer.from(s).toString('latin1');
const codes = Array.from({ length: n }, (_, i) => fresh(`c${i.toString(36).padStart(7, '0')}`));
const names = kind === 'aliases' ? codes.map((_, i) => fresh(`spring-sale-${i}-2026`)) : codes;
gc();
const before = process.memoryUsage().heapUsed;
let estimated = 0;
for (let i = 0; i < n; i += 1) {
  const code = codes[i]!;
  // The visited name as the request gives it: a string of its own, which the key (on the default domain) is.
  const name = fresh(names[i]!);
  const target: RedirectTarget =
    kind === 'misses'
      ? { kind: 'missing' }
      : {
          kind: 'link',
          id: i + 1,
          code: fresh(code),
          alias: kind === 'aliases' ? name : null,
          url: fresh(`https://example.com/articles/${i}?utm_source=bench`),
          expiresAt: null,
          rules: null,
          preview: null,
          broken: null,
        };
  const key = linkCacheKey(domainId, name);
  cache.set(key, target, cache.epoch());
  policy.decideFromCache(domainId === 0 ? undefined : HOST, name, 'GET', () => {
    throw new Error('a link without rules reads no visitor');
  });
  estimated += entryBytes(key, target);
}
gc();
const perEntry = (process.memoryUsage().heapUsed - before) / n;
process.stdout.write(
  `${n} cached ${kind}: ${perEntry.toFixed(0)} bytes of heap each (entryBytes estimates ${(estimated / n).toFixed(0)}), ` +
    `cache size ${cache.size()}; Node ${process.version}\n`,
);
