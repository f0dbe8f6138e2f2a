import {
  CLICK_NUMBER_FIELDS,
  CLICK_TEXT_FIELDS,
  type ClickEvent,
  type ClickNumberField,
  type ClickTextField,
} from '../event/click-event.js';

/**
 * What a ClickBatch posts to the writer thread: typed arrays (moved, not cloned) and the batch's distinct
 * strings once. `text[field][i]` is an index into `values`, -1 for null (or an absent key).
 */
export interface ClickBatchMessage {
  length: number;
  numbers: Record<ClickNumberField, Float64Array>;
  text: Record<ClickTextField, Int32Array>;
  values: string[];
}

/** How far a window sorted by link is committed: its clicks of links below `link`, and the first `count` of `link`. */
export interface WindowProgress {
  link: number;
  count: number;
}

/** Where a partly written window got to: ClickBatch.written. */
export interface WindowWritten extends WindowProgress {
  /** journal positions the window spans (its clicks before any were dropped) */
  span: number;
}

/** The clicks of a batch message at `indexes`, as events again (the writer thread's side). */
export function eventsOfMessage(m: ClickBatchMessage, indexes: ArrayLike<number>): ClickEvent[] {
  return Array.from(indexes, (i) => eventAt(m.numbers, m.text, m.values, i));
}

/** Fields a click may leave out: absent (or null) comes back absent. */
const OPTIONAL_TEXT = new Set<ClickTextField>([
  'key',
  'country',
  'visitor',
  'alias',
  'domain',
  'ruleId',
  'variantId',
  'device',
  'browser',
  'os',
  'signal',
]);

function eventAt(
  numbers: Record<ClickNumberField, Float64Array>,
  text: Record<ClickTextField, Int32Array>,
  values: readonly string[],
  i: number,
): ClickEvent {
  const e: Record<string, unknown> = {};
  for (const f of CLICK_NUMBER_FIELDS) e[f] = numbers[f][i];
  for (const f of CLICK_TEXT_FIELDS) {
    const at = text[f][i]!;
    if (at >= 0) e[f] = values[at];
    else if (!OPTIONAL_TEXT.has(f)) e[f] = null;
  }
  return e as unknown as ClickEvent;
}

const columns = <F extends string, A>(fields: readonly F[], make: () => A): Record<F, A> =>
  Object.fromEntries(fields.map((f) => [f, make()])) as Record<F, A>;

/**
 * Clicks kept in columns rather than as one object each: the in-process queue copies a visit's fields in
 * here at once, so the redirect's event object dies young instead of being promoted by the garbage
 * collector while it waits for its flush, and a batch crosses to the writer thread in one structured clone
 * of a few arrays. Text repeats a lot (user agents, referrers); each distinct string is stored once per
 * batch. The columns follow the field lists of click-event.ts. Batches are reused once written (`reset`).
 */
export class ClickBatch {
  length = 0;
  readonly numbers: Record<ClickNumberField, Float64Array>;
  readonly text: Record<ClickTextField, Int32Array>;
  values: string[] = [];
  /** text -> its index in `values`, while the batch is filled; let go once it is full (see push) */
  private index: Map<string, number> | null = new Map();
  /**
   * A window partly written (dropWritten): it held `span` clicks (journal positions), of which those of links
   * below `link` and the first `count` of `link` are committed and gone from the batch. Null otherwise.
   */
  written: WindowWritten | null = null;

  constructor(readonly capacity: number) {
    this.numbers = columns(CLICK_NUMBER_FIELDS, () => new Float64Array(capacity));
    this.text = columns(CLICK_TEXT_FIELDS, () => new Int32Array(capacity));
  }

  /** A batch holding `events`, in order. */
  static of(events: readonly ClickEvent[]): ClickBatch {
    const batch = new ClickBatch(Math.max(1, events.length));
    for (const e of events) batch.push(e);
    return batch;
  }

  get full(): boolean {
    return this.length === this.capacity;
  }

  push(e: ClickEvent): void {
    const i = this.length++;
    for (const f of CLICK_NUMBER_FIELDS) this.numbers[f][i] = e[f];
    for (const f of CLICK_TEXT_FIELDS) this.text[f][i] = this.intern(e[f]);
    // A full batch takes no more text: its index was most of the memory of a click waiting in the queue
    // (measured, 500,000 clicks waiting: heap and columns 178 → 63 bytes per click).
    if (this.length === this.capacity) this.index = null;
  }

  private intern(value: string | null | undefined): number {
    if (value === null || value === undefined) return -1;
    const index = (this.index ??= new Map(this.values.map((v, at) => [v, at])));
    let at = index.get(value);
    if (at === undefined) {
      at = this.values.length;
      this.values.push(value);
      index.set(value, at);
    }
    return at;
  }

  event(i: number): ClickEvent {
    return eventAt(this.numbers, this.text, this.values, i);
  }

  toEvents(): ClickEvent[] {
    return Array.from({ length: this.length }, (_, i) => this.event(i));
  }

  /** Copies of the filled part, for postMessage (their buffers may be transferred). */
  toMessage(): ClickBatchMessage {
    const n = this.length;
    return { length: n, values: this.values, ...this.sliced(n) };
  }

  private sliced(n: number): Pick<ClickBatchMessage, 'numbers' | 'text'> {
    const numbers = {} as Record<ClickNumberField, Float64Array>;
    const text = {} as Record<ClickTextField, Int32Array>;
    for (const f of CLICK_NUMBER_FIELDS) numbers[f] = this.numbers[f].slice(0, n);
    for (const f of CLICK_TEXT_FIELDS) text[f] = this.text[f].slice(0, n);
    return { numbers, text };
  }

  /**
   * Forgets the clicks a window writer committed before it failed (sqlite-click-thread.ts): those of links
   * below `link`, and the first `count` of `link`, in batch order. The rest keeps its order and is written
   * again; `written` remembers where the window got to.
   */
  dropWritten(link: number, count: number): void {
    const ids = this.numbers.linkId;
    let kept = 0;
    let seen = 0;
    for (let i = 0; i < this.length; i += 1) {
      const id = ids[i]!;
      if (id < link || (id === link && seen++ < count)) continue;
      if (kept !== i) {
        for (const f of CLICK_NUMBER_FIELDS) this.numbers[f][kept] = this.numbers[f][i]!;
        for (const f of CLICK_TEXT_FIELDS) this.text[f][kept] = this.text[f][i]!;
      }
      kept += 1;
    }
    const before = this.written;
    this.written = {
      span: before?.span ?? this.length,
      link,
      count: (before?.link === link ? before.count : 0) + count,
    };
    this.length = kept;
  }

  reset(): void {
    this.length = 0;
    this.written = null;
    this.values = [];
    this.index = new Map();
  }
}

/** The buffers of a message, to transfer rather than copy. */
export const transferablesOf = (m: ClickBatchMessage): ArrayBuffer[] =>
  [...Object.values<Float64Array>(m.numbers), ...Object.values<Int32Array>(m.text)].map((a) => a.buffer as ArrayBuffer);
