import { DAY_MS } from '../rollups/rollup-plan.js';

/**
 * Sums over closed periods, kept in memory, for the statistics of long windows.
 *
 * A window of a year reads about 8,800 hourly rows and 37,000 daily value rows per kind (~25 ms on SQLite,
 * bench/). The rows of days that are over do not change any more (clicks are timestamped when they happen
 * and written within seconds), so a window is cut into whole calendar months and the days at either end;
 * each piece that lies entirely in the past is summed once and remembered, and only the last day or so is
 * read every time. A day counts as over one day after it ended (late writes: a click queue that was down);
 * a remembered sum is dropped after TTL_MS in any case, and the least recently stored are forgotten beyond
 * CAPACITY entries (a value or a bucket each).
 */
const GRACE_MS = DAY_MS;
const TTL_MS = 10 * 60_000;
const CAPACITY = 500_000;

export interface Span {
  from: number;
  to: number;
  /** entirely in the past (and the grace period): its sums may be remembered */
  closed: boolean;
}

/** The end of the last closed day at `now`: rows before it do not change any more. */
export const closedBefore = (now: number): number => Math.floor((now - GRACE_MS) / DAY_MS) * DAY_MS;

const nextMonth = (ms: number): number => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
};

/**
 * [from, to) (whole days, or hours) as the days before the first whole month, each whole month, the days
 * after; a piece that reaches past the last closed day is cut there, into a closed and an open piece.
 */
export function spans(from: number, to: number, now: number): Span[] {
  const bounds = [from];
  for (let at = nextMonth(from); at < to; at = nextMonth(at)) bounds.push(at);
  bounds.push(to);
  const cut = closedBefore(now);
  const out: Span[] = [];
  for (let i = 1; i < bounds.length; i += 1) {
    const [a, b] = [bounds[i - 1]!, bounds[i]!];
    if (b <= cut || a >= cut) out.push({ from: a, to: b, closed: b <= cut });
    else out.push({ from: a, to: cut, closed: true }, { from: cut, to: b, closed: false });
  }
  return out;
}

export class ClosedMonthCache {
  private readonly entries = new Map<string, { until: number; rows: unknown[] }>();
  private size = 0;

  /** The rows of one span: remembered if it is a closed month, otherwise (or the first time) loaded. */
  async rows<R>(key: string, span: Span, now: number, load: () => Promise<R[]>): Promise<R[]> {
    if (!span.closed) return load();
    const hit = this.entries.get(key);
    if (hit && hit.until > now) return hit.rows as R[];
    const rows = await load();
    this.forget(key);
    this.entries.set(key, { until: now + TTL_MS, rows });
    this.size += rows.length;
    for (const oldest of this.entries.keys()) {
      if (this.size <= CAPACITY) break;
      this.forget(oldest);
    }
    return rows;
  }

  /** Forgets every remembered sum: rows of closed days changed (an import brought visits on their dates). */
  clear(): void {
    this.entries.clear();
    this.size = 0;
  }

  private forget(key: string): void {
    const old = this.entries.get(key);
    if (!old) return;
    this.size -= old.rows.length;
    this.entries.delete(key);
  }
}
