import { performance } from 'node:perf_hooks';
import { OutboundError } from '../../infra/outbound-http.js';
import type { AttemptOutcome, AttemptQueue, AttemptResult, ClaimedAttempt } from './webhook-attempts.js';
import { sendAttempt, type SendDeps } from './webhook-send.js';

export { DELIVERY_DEADLINE_MS, RESPONSE_BODY_BYTES } from './webhook-send.js';

/** A claimed attempt is this worker's for this long (past the deadline, with room for a slow database). */
export const DELIVERY_LEASE_MS = 60_000;
/** How often due attempts and new events are looked for when nothing wakes the dispatcher. */
const POLL_MS = 250;
/**
 * While the process is busy serving (DispatcherDeps.busy), deliveries give way to visits: one look for work at most
 * this often, for one set of places (`concurrency`) instead of two, and new events fanned out only once the due
 * attempts ran dry, one turn at a time. Each look, claim and record is event-loop time (and, on the embedded
 * engine, the write lock) taken from the redirect; what waits is sent once the load eases, and the oldest
 * undelivered event's age (metrics) shows how far behind that leaves the hooks.
 */
export const BUSY_LOOK_MS = 1_000;

export interface DispatcherDeps extends SendDeps {
  queue: AttemptQueue;
  /** new events → pending deliveries (webhook-fanout.ts), a turn of 1,000 after another while `more()` */
  fanout: { run(more?: () => boolean): Promise<number> };
  /** WEBHOOK_CONCURRENCY */
  concurrency: number;
  onOutcome?: (outcome: Exclude<AttemptOutcome, 'lost'>) => void;
  pollMs?: number;
  /** whether the process is busy serving (infra/serving-load.ts): deliveries give way (BUSY_LOOK_MS); never, without it */
  busy?: () => boolean;
}

/**
 * What the dispatcher holds: attempts claimed and waiting for a place (`backlog`), in flight (their cancels), and
 * ended but not recorded yet (`toRecord`, written together in one transaction by the recorder, and `inRecording`,
 * those of the transaction under way). All of them are leased to this process: a kill sends again, after the lease,
 * the ones it had sent.
 */
interface Pool {
  backlog: ClaimedAttempt[];
  inFlight: Map<number, AbortController>;
  toRecord: Array<{ delivery: ClaimedAttempt['delivery']; result: AttemptResult }>;
  inRecording: number;
  recording: Promise<void> | null;
  settled: Set<Promise<void>>;
  /** the last claim found fewer due attempts than it had room for */
  ranDry: boolean;
}

const emptyPool = (): Pool => ({
  backlog: [],
  inFlight: new Map(),
  toRecord: [],
  inRecording: 0,
  recording: null,
  settled: new Set(),
  ranDry: true,
});

/** Writes what ended while the last write ran, one transaction at a time; a failed write is left to the leases. */
function recordEnded(deps: DispatcherDeps, pool: Pool): Promise<void> {
  pool.recording ??= (async () => {
    while (pool.toRecord.length) {
      const batch = pool.toRecord.splice(0);
      pool.inRecording = batch.length;
      try {
        for (const outcome of await deps.queue.recordMany(batch)) if (outcome !== 'lost') deps.onOutcome?.(outcome);
      } catch (err) {
        deps.log.error(
          { err, deliveries: batch.length },
          'webhook attempts could not be recorded; retried after their lease',
        );
      } finally {
        pool.inRecording = 0;
      }
    }
    pool.recording = null;
  })();
  return pool.recording;
}

/** An attempt made; its result queued for the recorder. A cancel (shutdown) records nothing: the lease runs out. */
async function attempt(deps: DispatcherDeps, pool: Pool, claimed: ClaimedAttempt, controller: AbortController) {
  const id = Number(claimed.delivery.id);
  try {
    const result = await sendAttempt(deps, claimed, controller.signal);
    pool.toRecord.push({ delivery: claimed.delivery, result });
  } catch (err) {
    if (!(err instanceof OutboundError && err.failure === 'cancelled'))
      deps.log.error({ err, deliveryId: id }, 'a webhook delivery failed unexpectedly; it is retried after its lease');
  } finally {
    pool.inFlight.delete(id);
  }
  await recordEnded(deps, pool);
}

/** Starts waiting attempts while there are places. */
function startWaiting(deps: DispatcherDeps, pool: Pool, ended: () => void): void {
  while (pool.inFlight.size < deps.concurrency && pool.backlog.length) {
    const c = pool.backlog.shift()!;
    const controller = new AbortController();
    pool.inFlight.set(Number(c.delivery.id), controller);
    const p = attempt(deps, pool, c, controller).finally(() => {
      pool.settled.delete(p);
      ended();
    });
    pool.settled.add(p);
  }
}

/**
 * One look for work: new events fanned out (when asked), then attempts claimed in one go for the places free now
 * and as many again to follow (so a place that frees is filled without a query). True: there may be more.
 * Giving way (BUSY_LOOK_MS): the places free now only, and the fan-out's one turn only once the due ones ran dry.
 */
async function lookForWork(
  deps: DispatcherDeps,
  pool: Pool,
  look: { fanout: boolean; givingWay: boolean },
  ended: () => void,
): Promise<boolean> {
  // at full pace until the process gets busy; giving way, one turn
  if (look.fanout && !look.givingWay) await deps.fanout.run(() => !(deps.busy?.() ?? false));
  else if (look.fanout && pool.ranDry) await deps.fanout.run(() => false);
  const held = pool.backlog.length + pool.inFlight.size + pool.toRecord.length + pool.inRecording;
  const room = (look.givingWay ? 1 : 2) * deps.concurrency - held;
  if (room < Math.max(1, deps.concurrency / 2)) return false;
  const claimed = await deps.queue.claim(room, deps.clock.now(), DELIVERY_LEASE_MS);
  pool.ranDry = claimed.length < room;
  pool.backlog.push(...claimed);
  startWaiting(deps, pool, ended);
  return claimed.length === room;
}

async function settledAll(pool: Pool): Promise<void> {
  while (pool.settled.size || pool.recording) {
    await Promise.allSettled([...pool.settled]);
    await pool.recording;
  }
}

interface TurnFlags {
  /** look again once this look ends (woken meanwhile, or there was more than room) */
  again: boolean;
  /** read new events before claiming (woken from outside, or the poll) */
  fanoutWanted: boolean;
  stopped: boolean;
}

/** Looks for work until there is no more, or no room; giving way, once (the next look waits: BUSY_LOOK_MS). */
async function turns(
  deps: DispatcherDeps,
  pool: Pool,
  flags: TurnFlags,
  givingWay: boolean,
  ended: () => void,
): Promise<void> {
  try {
    do {
      flags.again = false;
      const fanout = flags.fanoutWanted;
      flags.fanoutWanted = false;
      if (await lookForWork(deps, pool, { fanout, givingWay }, ended)) flags.again = true;
    } while (flags.again && !flags.stopped && !givingWay);
  } catch (err) {
    deps.log.error({ err }, 'webhook dispatch failed; trying again shortly');
  }
}

/** Cancels what is in flight, records what ended, and lets go of the rest for another instance (or the next start). */
async function drain(deps: DispatcherDeps, pool: Pool): Promise<void> {
  const ids = [...pool.inFlight.keys(), ...pool.backlog.splice(0).map((c) => Number(c.delivery.id))];
  for (const c of pool.inFlight.values()) c.abort();
  await Promise.allSettled([...pool.settled]);
  await recordEnded(deps, pool);
  await deps.queue.release(ids).catch((err: unknown) => deps.log.warn({ err }, 'could not release webhook attempts'));
}

/**
 * When the dispatcher may look for work: at once, unless the process is busy serving (`busy`); then at most every
 * BUSY_LOOK_MS, a look asked for sooner being put off until then (`later` runs it).
 */
function createPace(busy: (() => boolean) | undefined, later: () => void) {
  /** when the last look while giving way started (performance.now()), and the look put off until a second after */
  let lastLook = Number.NEGATIVE_INFINITY;
  let putOff: NodeJS.Timeout | null = null;
  return {
    /** A look now: whether it gives way; null: not now (put off). `force`: now and at full pace (tick()). */
    givingWay(force: boolean): boolean | null {
      if (force || !(busy?.() ?? false)) return false;
      const wait = lastLook + BUSY_LOOK_MS - performance.now();
      if (wait <= 0) {
        lastLook = performance.now();
        return true;
      }
      putOff ??= setTimeout(() => {
        putOff = null;
        later();
      }, wait);
      return null;
    },
    stop(): void {
      if (putOff) clearTimeout(putOff);
      putOff = null;
    },
  };
}

/**
 * Sends the attempts: POSTs the event with Standard Webhooks' headers through the outbound module (every address
 * checked at each delivery, the checked one connected, no redirects, 15 s), then records what came of it. Up to
 * `concurrency` in flight; woken when work is queued here, and every POLL_MS for the rest (other instances' events,
 * retries coming due, leases that ran out).
 */
export function createDispatcher(deps: DispatcherDeps) {
  const pool = emptyPool();
  const flags: TurnFlags = { again: false, fanoutWanted: true, stopped: true };
  let timer: NodeJS.Timeout | null = null;
  let wakeQueued = false;
  let ticking: Promise<void> | null = null;
  const pace = createPace(deps.busy, () => void tick());

  /**
   * One run of looks for work at a time: a call during one asks it to look again, and shares it. While the
   * process is busy serving, a look comes at most every BUSY_LOOK_MS (a call before then puts it off until then).
   */
  function tick(force = false): Promise<void> {
    if (flags.stopped) return Promise.resolve();
    if (ticking) {
      flags.again = true;
      return ticking;
    }
    const givingWay = pace.givingWay(force);
    if (givingWay === null) return Promise.resolve();
    ticking = turns(deps, pool, flags, givingWay, ended).finally(() => {
      ticking = null;
      if (flags.again) soon(); // asked again during a look that gave way: the next one, when its time comes
    });
    return ticking;
  }
  function soon(): void {
    if (flags.stopped || wakeQueued) return;
    wakeQueued = true;
    setImmediate(() => {
      wakeQueued = false;
      void tick();
    });
  }
  /** An attempt ended: the next waiting one takes its place; more are claimed once half the places are free. */
  function ended(): void {
    startWaiting(deps, pool, ended);
    soon();
  }
  /** Looks for new events and due attempts now (coalesced: many wake-ups in one turn make one look). */
  function wake(): void {
    flags.fanoutWanted = true;
    soon();
  }

  return {
    start(): void {
      if (!flags.stopped) return;
      flags.stopped = false;
      timer = setInterval(wake, deps.pollMs ?? POLL_MS).unref();
      wake();
    },
    wake,
    /** Runs one look for work (new events included) now and waits for it (tests; an operator's nudge). */
    async tick(): Promise<void> {
      while (ticking) await ticking;
      flags.fanoutWanted = true;
      await tick(true);
    },
    /** The attempts in flight, settled and recorded (tests). */
    idle: () => settledAll(pool),
    /** Stops looking, cancels what is in flight and lets it, and what waited, go for another instance. */
    async stop(): Promise<void> {
      flags.stopped = true;
      if (timer) clearInterval(timer);
      pace.stop();
      await drain(deps, pool);
    },
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
