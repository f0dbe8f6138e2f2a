import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** How often the event loop's utilisation is sampled. */
const SAMPLE_MS = 100;
/** Busy from the first busy sample; calm again only after this long without one (quick to give way, slow to resume). */
const CALM_MS = 1_000;
/** Over this share of a sample spent outside the event loop's wait, with requests answered in it: busy serving. */
export const BUSY_UTILIZATION = 0.5;
/**
 * And at least this many requests a second answered in it: a dashboard or a test polling while a dispatcher catches
 * up (which keeps the loop busy by itself) is not a serving load to give way to.
 */
export const BUSY_REQUESTS_PER_SECOND = 100;

export interface ServingLoad {
  /** Whether a sample of the last CALM_MS was busy serving: the event loop over half busy, requests answered at a rate. */
  busy(): boolean;
  stop(): void;
}

/**
 * Whether this process is busy serving, for the work that can wait and should give way to visits (webhook
 * deliveries). Requests answered are part of the verdict so that the waiting work's own load never counts: a
 * dispatcher catching up alone keeps the event loop busy too, and must not slow itself down for it.
 */
export function createServingLoad(
  answered: () => number,
  opts: { sampleMs?: number; calmMs?: number; requestsPerSecond?: number } = {},
): ServingLoad {
  const sampleMs = opts.sampleMs ?? SAMPLE_MS;
  const calmSamples = Math.max(1, Math.round((opts.calmMs ?? CALM_MS) / sampleMs));
  const requests = ((opts.requestsPerSecond ?? BUSY_REQUESTS_PER_SECOND) * sampleMs) / 1000;
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  let lastAnswered = answered();
  /** samples since the last busy one (calmSamples or more: calm) */
  let sinceBusy = Number.POSITIVE_INFINITY;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const utilization = performance.eventLoopUtilization(now, last).utilization;
    const count = answered();
    sinceBusy = utilization > BUSY_UTILIZATION && count - lastAnswered >= requests ? 0 : sinceBusy + 1;
    last = now;
    lastAnswered = count;
  }, sampleMs).unref();
  return {
    busy: () => sinceBusy < calmSamples,
    stop: () => clearInterval(timer),
  };
}
