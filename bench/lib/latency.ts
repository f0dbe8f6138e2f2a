/** Latency histograms of the load generator: mergeable across runs, percentiles at 10 µs resolution. */

export interface Latency {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

/** 10 µs buckets up to 50 ms, then 1 ms buckets: exact enough for percentiles, small enough to print. */
export const bucketOf = (ms: number): number => (ms < 50 ? Math.floor(ms * 100) : 5000 + Math.floor(ms - 50));
const upperOf = (bucket: number): number => (bucket < 5000 ? (bucket + 1) / 100 : bucket - 5000 + 51);

/** Latency percentiles of one or more histograms added together (each bucket read as its upper bound). */
export function latencyOf(histograms: Array<Record<string, number>>): Latency {
  const counts = new Map<number, number>();
  for (const h of histograms)
    for (const [b, n] of Object.entries(h)) counts.set(Number(b), (counts.get(Number(b)) ?? 0) + n);
  const buckets = [...counts].sort((a, b) => a[0] - b[0]);
  const total = buckets.reduce((n, [, c]) => n + c, 0);
  const at = (q: number): number => {
    let seen = 0;
    for (const [b, c] of buckets) if ((seen += c) >= Math.ceil(q * total)) return upperOf(b);
    return 0;
  };
  const mean = total ? buckets.reduce((s, [b, c]) => s + upperOf(b) * c, 0) / total : 0;
  return {
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    p999: at(0.999),
    max: total ? upperOf(buckets[buckets.length - 1]![0]) : 0,
    mean,
  };
}
