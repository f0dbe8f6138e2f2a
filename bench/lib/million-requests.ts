/**
 * The requests of bench/million.ts, each timed alone (one at a time), from sending to the whole body read (the
 * CSV export: to its first chunk, then the body is cancelled). The search terms match in the seeded links
 * (bench/lib/million-seed.ts): a title word of 1,000 links, a code, an alias, a URL part of one link each; the
 * two-character term matches none (the worst case of the short-term scan) and `example.com` every link.
 */
import { MILLION } from './million-seed.js';

export interface Target {
  userId: number;
  code: string;
}
interface Callers extends Target {
  admin: string;
  user: string;
}

export interface Endpoint {
  name: string;
  budgetMs: number;
  /** one sample (or several: the cursor walk times each of its pages) */
  run(base: string, c: Callers, n: number): Promise<Sample[]>;
}

const CREATE_MS = 50;
const READ_MS = 200;
const EXPORT_MS = 500;

/** A request's time, and whether it answered as expected (a 503 of the overload guard does not). */
export interface Sample {
  ms: number;
  ok: boolean;
}

async function timed(url: string, init: RequestInit, expect: number): Promise<Sample & { body: unknown }> {
  const started = performance.now();
  const res = await fetch(url, init);
  const text = await res.text();
  const ms = performance.now() - started;
  const ok = res.status === expect;
  if (!ok && res.status !== 503) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return { ms, ok, body: ok && text.startsWith('{') ? JSON.parse(text) : text };
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

function get(name: string, path: (c: Callers) => string, who: 'admin' | 'user' = 'user'): Endpoint {
  return {
    name,
    budgetMs: READ_MS,
    run: async (base, c) => [await timed(`${base}${path(c)}`, { headers: auth(c[who]) }, 200)],
  };
}

const q = (text: string) => `q=${encodeURIComponent(text)}`;
const mid = MILLION.codeOf(500_000);

/** 30 pages of 20 in cursor mode, newest first: each page one sample. */
const cursorWalk: Endpoint = {
  name: 'user list, 30 cursor pages (each page)',
  budgetMs: READ_MS,
  async run(base, c) {
    const out: Sample[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 30; page += 1) {
      const url = `${base}/api/v2/users/${c.userId}/links?order=desc&limit=20${cursor ? `&cursor=${cursor}` : ''}`;
      const { ms, ok, body } = await timed(url, { headers: auth(c.user) }, 200);
      out.push({ ms, ok });
      cursor = ok ? (body as { pagination: { nextCursor: string | null } }).pagination.nextCursor : null;
      if (!cursor) break;
    }
    return out;
  },
};

const create: Endpoint = {
  name: 'POST /links (create)',
  budgetMs: CREATE_MS,
  run: async (base, c, n) => [
    await timed(
      `${base}/api/v1/links`,
      {
        method: 'POST',
        headers: { ...auth(c.user), 'content-type': 'application/json' },
        body: JSON.stringify({
          original_url: `https://example.org/created/${n}`,
          title: `Created ${n}`,
          tags: ['new'],
        }),
      },
      201,
    ),
  ],
};

/**
 * A change of one link's title: on PostgreSQL every statement-level trigger of `links` runs its update branch
 * (migrations 050, 056, 059), over transition tables of one row.
 */
const change: Endpoint = {
  name: 'PATCH /links/{code} (title)',
  budgetMs: CREATE_MS,
  run: async (base, c, n) => [
    await timed(
      `${base}/api/v1/links/${c.code}`,
      {
        method: 'PATCH',
        headers: { ...auth(c.user), 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ title: `Changed ${n}` }),
      },
      200,
    ),
  ],
};

/** Time to the first chunk of the CSV body. */
const exportStart: Endpoint = {
  name: 'CSV export, first byte',
  budgetMs: EXPORT_MS,
  async run(base, c) {
    const started = performance.now();
    const res = await fetch(`${base}/api/v1/users/${c.userId}/links`, {
      headers: { ...auth(c.user), accept: 'text/csv' },
    });
    const reader = res.body!.getReader();
    await reader.read();
    const ms = performance.now() - started;
    await reader.cancel();
    if (res.status !== 200 && res.status !== 503) throw new Error(`CSV export: ${res.status}`);
    return [{ ms, ok: res.status === 200 }];
  },
};

export const ENDPOINTS: Endpoint[] = [
  get('admin list (page 1, total)', () => '/api/v1/links', 'admin'),
  get('admin list, newest first', () => '/api/v1/links?sort=created_at&order=desc', 'admin'),
  get('admin list, most clicked', () => '/api/v1/links?sort=click_count&order=desc', 'admin'),
  get('admin list, tag=rare', () => '/api/v1/links?tag=rare', 'admin'),
  get('admin list, user_id', (c) => `/api/v1/links?user_id=${c.userId}`, 'admin'),
  get('admin q: title word (1,000 links)', () => `/api/v1/links?${q('Topic417')}`, 'admin'),
  get('admin q: a code', () => `/api/v1/links?${q(mid.toUpperCase())}`, 'admin'),
  get('admin q: an alias', () => `/api/v1/links?${q('old-slug-424200')}`, 'admin'),
  get('admin q: URL part', () => `/api/v1/links?${q('articles/777777?')}`, 'admin'),
  get('admin q: 2 characters, no match', () => `/api/v1/links?${q('zq')}`, 'admin'),
  // In about 2 % of the codes (m + 7 hex digits: six pairs of hex digits), in no title or URL.
  get('admin q: 2 characters, in codes', () => `/api/v1/links?${q('AF')}`, 'admin'),
  get('admin q: every link', () => `/api/v1/links?${q('example.com')}`, 'admin'),
  get('user list (page 1, total)', (c) => `/api/v1/users/${c.userId}/links`),
  get('user list, newest first', (c) => `/api/v1/users/${c.userId}/links?order=desc`),
  get('user list, most clicked', (c) => `/api/v1/users/${c.userId}/links?sort=click_count&order=desc`),
  get('user list, expires_at', (c) => `/api/v1/users/${c.userId}/links?sort=expires_at`),
  get('user list, tag=rare (10,000)', (c) => `/api/v1/users/${c.userId}/links?tag=rare`),
  get('user list, tag=common (500,000)', (c) => `/api/v1/users/${c.userId}/links?tag=common`),
  get('user list, q title word', (c) => `/api/v1/users/${c.userId}/links?${q('topic417')}`),
  get('user list, q + tag', (c) => `/api/v1/users/${c.userId}/links?${q('topic400')}&tag=rare`),
  cursorWalk,
  get('user stats', (c) => `/api/v1/users/${c.userId}/stats`),
  get('link stats', (c) => `/api/v1/links/${c.code}/stats`),
  get('link lookup', (c) => `/api/v1/links/${c.code}`),
  create,
  change,
  exportStart,
];

/** Each endpoint's samples: a few warm-up calls, then `samples` timed ones (the cursor walk: whole walks). */
export async function requestRows(
  base: string,
  c: Callers,
  endpoints: Endpoint[],
  samples: number,
  log: (l: string) => void,
): Promise<Map<string, Sample[]>> {
  const out = new Map<string, Sample[]>();
  let n = 0;
  for (const e of endpoints) {
    const runs =
      e === cursorWalk
        ? Math.max(3, Math.round(samples / 30))
        : e === exportStart
          ? Math.max(5, Math.round(samples / 10))
          : samples;
    for (let i = 0; i < 3; i += 1) await e.run(base, c, (n += 1));
    const times: Sample[] = [];
    for (let i = 0; i < runs; i += 1) times.push(...(await e.run(base, c, (n += 1))));
    out.set(e.name, times);
    const sorted = times.map((x) => x.ms).sort((a, b) => a - b);
    const shed = times.filter((x) => !x.ok).length;
    const p50 = sorted[Math.floor(sorted.length / 2)]!.toFixed(1);
    const max = sorted[sorted.length - 1]!.toFixed(1);
    log(`  ${e.name}: p50 ${p50} ms, max ${max} ms${shed ? `, ${shed} shed (503)` : ''}`);
  }
  return out;
}
