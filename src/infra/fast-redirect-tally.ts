import type { Counter, Histogram } from 'prom-client';

/** prom-client 15's cells of one label set of a histogram (Histogram.hashMap's values). */
interface HistogramCells {
  labels: Record<string, string | number>;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

/**
 * Adds `count` observations, `perBucket[i]` of them at most `bounds[i]` (the rest above the last), summing to
 * `sum`, to the histogram's label set: what `count` calls of observe() would do. prom-client has no such call;
 * its cells are reached through `hashMap` (prom-client 15.1, pinned in package-lock.json;
 * test/modules/redirect/redirect-fast-path.test.ts reads the series after fast redirects).
 */
function addObservations(
  histogram: Histogram<string>,
  labels: Record<string, string | number>,
  bounds: readonly number[],
  perBucket: Float64Array,
  sum: number,
  count: number,
): void {
  const cellsOf = () =>
    Object.values((histogram as unknown as { hashMap: Record<string, HistogramCells> }).hashMap).find((c) =>
      Object.entries(labels).every(([k, v]) => String(c.labels[k]) === String(v)),
    );
  let cells = cellsOf();
  if (cells === undefined) {
    histogram.zero(labels);
    cells = cellsOf()!;
  }
  bounds.forEach((bound, i) => (cells.bucketValues[bound] = (cells.bucketValues[bound] ?? 0) + perBucket[i]!));
  cells.sum += sum;
  cells.count += count;
}

/** One method and status's fast redirects not yet folded into the series. */
interface FastTally {
  method: string;
  route: string;
  status: number;
  count: number;
  sum: number;
  /** per HTTP_BUCKETS / REDIRECT_BUCKETS bound: observations at most it and above the one before */
  http: Float64Array;
  redirect: Float64Array;
}

const bucketOf = (bounds: readonly number[], seconds: number): number => {
  let i = 0;
  while (i < bounds.length && seconds > bounds[i]!) i += 1;
  return i; // bounds.length: above the last bound (+Inf only)
};

/**
 * The fast path's request metrics (modules/redirect/redirect-fast-path.ts): the same series as a redirect
 * through Fastify (http_requests_total, http_request_duration_seconds, ferry_redirect_duration_seconds), tallied
 * in plain numbers per method and status and folded into prom-client's series when they are read. Observing
 * through prom-client cost about 8 µs of the event loop per redirect (label hashing and validation, three
 * times: bench/ profile of redirect-browser); a tally costs two short loops over the buckets.
 */
export function createFastRedirectTally(
  series: {
    requests: Counter<string>;
    duration: Histogram<string>;
    redirectDuration: Histogram<string>;
  },
  HTTP_BUCKETS: readonly number[],
  REDIRECT_BUCKETS: readonly number[],
) {
  const tallies: FastTally[] = [];
  let total = 0;
  const tallyOf = (method: string, route: string, status: number): FastTally => {
    for (const t of tallies) if (t.status === status && t.method === method && t.route === route) return t;
    const t: FastTally = {
      method,
      route,
      status,
      count: 0,
      sum: 0,
      http: new Float64Array(HTTP_BUCKETS.length + 1),
      redirect: new Float64Array(REDIRECT_BUCKETS.length + 1),
    };
    tallies.push(t);
    return t;
  };
  return {
    observe(method: string, route: string, status: number, seconds: number): void {
      const t = tallyOf(method, route, status);
      t.count += 1;
      t.sum += seconds;
      t.http[bucketOf(HTTP_BUCKETS, seconds)]! += 1;
      t.redirect[bucketOf(REDIRECT_BUCKETS, seconds)]! += 1;
      total += 1;
    },
    total: () => total,
    /** Moves the tallies into the series (at scrape time). */
    fold(): void {
      for (const t of tallies) {
        if (t.count === 0) continue;
        const labels = { method: t.method, route: t.route, status_code: t.status };
        series.requests.inc(labels, t.count);
        addObservations(series.duration, labels, HTTP_BUCKETS, t.http, t.sum, t.count);
        addObservations(
          series.redirectDuration,
          { status_code: t.status },
          REDIRECT_BUCKETS,
          t.redirect,
          t.sum,
          t.count,
        );
        t.count = 0;
        t.sum = 0;
        t.http.fill(0);
        t.redirect.fill(0);
      }
    },
  };
}
