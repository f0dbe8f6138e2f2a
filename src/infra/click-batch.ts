import type { ClickEvent } from './click-queue.js';

/** What a ClickBatch posts to a worker thread: plain arrays and typed arrays, cloned (or moved) as they are. */
export interface ClickBatchMessage {
  length: number;
  linkId: Float64Array;
  clickedAt: Float64Array;
  shortCode: string[];
  ip: Array<string | null>;
  /** per click, an index into `values` (-1: none) */
  userAgent: Int32Array;
  referrer: Int32Array;
  /** each distinct user agent and referrer of the batch, once */
  values: string[];
  /** per click, its replay-guard key where it has one (clicks that came from the Redis stream's fallback) */
  key: Array<string | undefined>;
}

/**
 * Clicks kept in columns rather than as one object each: the in-process queue copies a visit's fields in
 * here at once, so the redirect's event object dies young instead of being promoted by the garbage
 * collector while it waits for its flush, and a batch crosses to the writer thread in one structured clone
 * of a few arrays. User agents and referrers repeat a lot; each distinct string is stored once per batch.
 * Batches are reused once written (`reset`).
 */
export class ClickBatch {
  length = 0;
  readonly linkId: Float64Array;
  readonly clickedAt: Float64Array;
  readonly shortCode: string[];
  readonly ip: Array<string | null>;
  readonly userAgent: Int32Array;
  readonly referrer: Int32Array;
  readonly key: Array<string | undefined>;
  values: string[] = [];
  private index = new Map<string, number>();

  constructor(readonly capacity: number) {
    this.linkId = new Float64Array(capacity);
    this.clickedAt = new Float64Array(capacity);
    this.shortCode = new Array<string>(capacity);
    this.ip = new Array<string | null>(capacity);
    this.userAgent = new Int32Array(capacity);
    this.referrer = new Int32Array(capacity);
    this.key = new Array<string | undefined>(capacity);
  }

  get full(): boolean {
    return this.length === this.capacity;
  }

  push(e: ClickEvent): void {
    const i = this.length++;
    this.linkId[i] = e.linkId;
    this.clickedAt[i] = e.clickedAt;
    this.shortCode[i] = e.shortCode;
    this.ip[i] = e.ip;
    this.userAgent[i] = this.intern(e.userAgent);
    this.referrer[i] = this.intern(e.referrer);
    this.key[i] = e.key;
  }

  private intern(value: string | null): number {
    if (value === null) return -1;
    let at = this.index.get(value);
    if (at === undefined) {
      at = this.values.length;
      this.values.push(value);
      this.index.set(value, at);
    }
    return at;
  }

  event(i: number): ClickEvent {
    const ua = this.userAgent[i]!;
    const ref = this.referrer[i]!;
    const key = this.key[i];
    return {
      linkId: this.linkId[i]!, shortCode: this.shortCode[i]!, clickedAt: this.clickedAt[i]!, ip: this.ip[i]!,
      userAgent: ua < 0 ? null : this.values[ua]!, referrer: ref < 0 ? null : this.values[ref]!,
      ...(key === undefined ? {} : { key }),
    };
  }

  toEvents(): ClickEvent[] {
    return Array.from({ length: this.length }, (_, i) => this.event(i));
  }

  /** Copies of the filled part, for postMessage (the typed arrays may be transferred). */
  toMessage(): ClickBatchMessage {
    const n = this.length;
    return {
      length: n, linkId: this.linkId.slice(0, n), clickedAt: this.clickedAt.slice(0, n), shortCode: this.shortCode.slice(0, n),
      ip: this.ip.slice(0, n), userAgent: this.userAgent.slice(0, n), referrer: this.referrer.slice(0, n), values: this.values,
      key: this.key.slice(0, n),
    };
  }

  /** Forgets the first `n` clicks (they were written); the rest moves to the front. */
  dropFirst(n: number): void {
    if (n <= 0) return;
    const left = Math.max(0, this.length - n);
    this.linkId.copyWithin(0, n, this.length);
    this.clickedAt.copyWithin(0, n, this.length);
    this.userAgent.copyWithin(0, n, this.length);
    this.referrer.copyWithin(0, n, this.length);
    this.shortCode.copyWithin(0, n, this.length);
    this.ip.copyWithin(0, n, this.length);
    this.key.copyWithin(0, n, this.length);
    this.length = left;
  }

  reset(): void {
    this.length = 0;
    this.shortCode.fill('');
    this.ip.fill(null);
    this.key.fill(undefined);
    this.values = [];
    this.index = new Map();
  }
}
