/**
 * When a failed delivery is tried again (SPEC §22): after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 24 h and 24 h
 * (about three days in all), each ± 10 %, never sooner than the receiver's `Retry-After` asks. Ten attempts.
 */
export const RETRY_DELAYS_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
  24 * 3_600_000,
  24 * 3_600_000,
] as const;

/** A hook whose every delivery failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 3 * 24 * 3_600_000;

/** Retry-After past this is read as this: a receiver cannot park a delivery for longer than the schedule runs. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** `Retry-After` (delay-seconds or an HTTP date) as milliseconds from `now`; null: none, or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now: number): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return null;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return null;
    ms = at - now;
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/**
 * When attempt `attempt + 1` is due after attempt `attempt` (1-based) failed at `now`; null: that was the last.
 * `random` in [0, 1) gives the jitter.
 */
export function nextAttemptAt(
  attempt: number,
  now: number,
  retryAfter: number | null,
  random: () => number = Math.random,
): number | null {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  const jittered = Math.round(base * (0.9 + 0.2 * random()));
  return now + Math.max(jittered, retryAfter ?? 0);
}
