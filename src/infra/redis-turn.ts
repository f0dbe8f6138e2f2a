import type { Redis } from 'ioredis';

/** A counter after a request was counted: its value and the milliseconds its window has left. */
export interface CounterReading {
  count: number;
  ttlMs: number;
}

/**
 * One event-loop turn's counts and appends. KEYS: the turn's counters, then its streams. ARGV: the number of
 * counters and of streams; per counter, its requests this turn, its window (ms) and its max; per stream, its
 * MAXLEN and field; per append, its stream (from 1), its value, and its gate: a counter (from 1; 0: none) and
 * the request's place among that counter's requests this turn. A counter is INCRBY'd once for all its
 * requests (the k-th request's count is the k-th value of that increment, so verdicts are those of counting
 * one by one), its window's expiry set when the key is new; a gated append is added only if its request's
 * count is within the counter's max. Returns each counter's value and ttl, then each append's entry id ('':
 * not added).
 */
const TURN_SCRIPT = `
local counters = tonumber(ARGV[1])
local streams = tonumber(ARGV[2])
local out = {}
local before = {}
local max = {}
for i = 1, counters do
  local a = 3 * i
  local n = tonumber(ARGV[a])
  local current = redis.call('INCRBY', KEYS[i], n)
  local ttl = redis.call('PTTL', KEYS[i])
  if current == n or ttl < 0 then
    redis.call('PEXPIRE', KEYS[i], ARGV[a + 1])
    ttl = tonumber(ARGV[a + 1])
  end
  before[i] = current - n
  max[i] = tonumber(ARGV[a + 2])
  out[#out + 1] = current
  out[#out + 1] = ttl
end
local s0 = 3 + 3 * counters
for a = s0 + 2 * streams, #ARGV, 4 do
  local stream = tonumber(ARGV[a])
  local gate = tonumber(ARGV[a + 2])
  local id = ''
  if gate == 0 or before[gate] + tonumber(ARGV[a + 3]) <= max[gate] then
    local s = s0 + 2 * (stream - 1)
    id = redis.call('XADD', KEYS[counters + stream], 'MAXLEN', '~', ARGV[s], '*', ARGV[s + 1], ARGV[a + 1])
  end
  out[#out + 1] = id
end
return out
`;

type TurnCommand = (numKeys: number, ...args: Array<string | number>) => Promise<Array<number | string>>;

/** Commands on the turn's connection wait this long; then the turn counts as failed (counts fail open, appends go elsewhere). */
const TURN_TIMEOUT_MS = 250;

/** A count's outcome: the reading, or null when Redis did not answer (callers fail open). */
export type Counted = (reading: CounterReading | null) => void;

interface Counter {
  windowMs: number;
  /** the max its gated appends are held to (admit) */
  max: number;
  readings: Counted[];
}

/** An append's outcome: its entry id, null when its visit's count refused it, or the failure when Redis did not answer. */
export type Appended = (id: string | null, failure: unknown) => void;

interface Append {
  stream: string;
  value: string;
  /** the counter and the request's place among its requests this turn (from 1), or null */
  gate: { key: string; place: number } | null;
  done: Appended;
}

/**
 * What the redirect asks of Redis during one event-loop turn, sent as ONE script run in the check phase, after
 * the turn's requests: the redirect limit's counts (plugins/redirect-limit.ts: the only place that counts) and
 * the click stream's appends (modules/clicks). A redirect then waits for one round trip per turn, whatever it
 * asks. A click may be gated by its visit's count (`admit`): added only if the visit is within the limit, in the
 * same run, so that the count and the click cost one round trip, not two.
 *
 * Its own connection: no offline queue, a command timeout of TURN_TIMEOUT_MS (a redirect does not wait longer
 * for Redis), and the click stream's other commands (observing its backlog) in order with its appends.
 */
export class RedisTurn {
  readonly redis: Redis;
  private readonly run: TurnCommand;
  private counters = new Map<string, Counter>();
  private appends: Append[] = [];
  /** per stream: MAXLEN and field */
  private readonly streams = new Map<string, [maxLen: number, field: string]>();
  private gate: Append['gate'] = null;
  /** the run this turn's requests go in: resolved once it has answered and every callback ran */
  private next: { sent: Promise<void>; resolve: () => void } | null = null;
  private carries = false;

  constructor(client: Redis) {
    this.redis = client.duplicate({
      enableOfflineQueue: false,
      enableAutoPipelining: false,
      commandTimeout: TURN_TIMEOUT_MS,
    });
    this.redis.defineCommand('ferryTurn', { lua: TURN_SCRIPT });
    this.run = (this.redis as unknown as { ferryTurn: TurnCommand }).ferryTurn.bind(this.redis);
  }

  /** Counts one request against the fixed window `key`. */
  count(key: string, windowMs: number, done: Counted): void {
    let counter = this.counters.get(key);
    if (counter === undefined) this.counters.set(key, (counter = { windowMs, max: 0, readings: [] }));
    counter.readings.push(done);
    this.schedule();
  }

  /**
   * Counts one request and records it (`record`) if it is admitted: its count at most `max`, or Redis did not
   * answer (the limit fails open). Where the click stream appends through this turn, `record` runs now and
   * what it appends is gated by the count in this same run; elsewhere (the journal, memory) it runs once the
   * count is known, before `done` is told.
   */
  admit(key: string, windowMs: number, max: number, record: () => void, done: Counted): void {
    if (!this.carries) {
      this.count(key, windowMs, (r) => {
        if (r === null || r.count <= max) record();
        done(r);
      });
      return;
    }
    this.count(key, windowMs, done);
    const counter = this.counters.get(key)!;
    counter.max = max;
    this.gate = { key, place: counter.readings.length };
    try {
      record();
    } finally {
      this.gate = null;
    }
  }

  /**
   * Adds `value` to `stream` (under `field`, MAXLEN ~ `maxLen`) in this turn's run; `done` is told the entry
   * id, null when its visit's count refused it (see admit), or the failure when Redis did not answer.
   */
  append(stream: string, maxLen: number, field: string, value: string, done: Appended): void {
    if (!this.streams.has(stream)) this.streams.set(stream, [maxLen, field]);
    this.appends.push({ stream, value, gate: this.gate, done });
    this.schedule();
  }

  /** Resolves once the run that carries what was asked so far has answered (or failed) and told everyone. */
  whenSent(): Promise<void> {
    this.schedule();
    return this.next!.sent;
  }

  /** The click stream says its appends go through this turn (before the first request): admit gates them. */
  carryAppends(): void {
    this.carries = true;
  }

  private schedule(): void {
    if (this.next !== null) return;
    let resolve!: () => void;
    const sent = new Promise<void>((r) => (resolve = r));
    this.next = { sent, resolve };
    setImmediate(this.send);
  }

  private readonly send = (): void => {
    const { counters, appends } = this;
    const done = this.next!.resolve;
    this.counters = new Map();
    this.appends = [];
    this.next = null;
    const keys = [...counters.keys()];
    const streams = [...new Set(appends.map((a) => a.stream))];
    const args: Array<string | number> = [...keys, ...streams, keys.length, streams.length];
    for (const c of counters.values()) args.push(c.readings.length, c.windowMs, c.max);
    for (const s of streams) args.push(...this.streams.get(s)!);
    for (const a of appends) {
      args.push(streams.indexOf(a.stream) + 1, a.value);
      if (a.gate === null) args.push(0, 0);
      else args.push(keys.indexOf(a.gate.key) + 1, a.gate.place);
    }
    const expected = 2 * keys.length + appends.length;
    this.run(keys.length + streams.length, ...args)
      .then(
        (out) =>
          Array.isArray(out) && out.length === expected
            ? settle(counters, appends, out)
            : fail(counters, appends, new Error('unexpected reply')),
        (err: unknown) => fail(counters, appends, err),
      )
      .finally(done);
  };
}

function settle(counters: Map<string, Counter>, appends: readonly Append[], out: ReadonlyArray<number | string>): void {
  let i = 0;
  for (const c of counters.values()) {
    const current = Number(out[i++]);
    const ttlMs = Number(out[i++]);
    const n = c.readings.length;
    c.readings.forEach((done, k) => done({ count: current - n + 1 + k, ttlMs }));
  }
  for (const a of appends) {
    const id = out[i++];
    a.done(id === '' ? null : String(id), null);
  }
}

function fail(counters: Map<string, Counter>, appends: readonly Append[], err: unknown): void {
  for (const c of counters.values()) for (const done of c.readings) done(null);
  for (const a of appends) a.done(null, err ?? new Error('no reply'));
}
