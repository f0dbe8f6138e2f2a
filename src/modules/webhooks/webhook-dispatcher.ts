import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { OutboundError, type OutboundHttp } from '../../infra/outbound-http.js';
import type { Clock } from '../../lib/clock.js';
import type { AttemptOutcome, AttemptQueue, AttemptResult, ClaimedAttempt } from './webhook-attempts.js';
import { signatureHeader, type SecretBox } from './webhook-secret.js';
import { retryAfterMs } from './webhook-schedule.js';

/** SPEC §22: 15 s for the whole exchange; the first 1,024 bytes of the answer kept. */
export const DELIVERY_DEADLINE_MS = 15_000;
export const RESPONSE_BODY_BYTES = 1_024;
/** A claimed attempt is this worker's for this long (past the deadline, with room for a slow database). */
export const DELIVERY_LEASE_MS = 60_000;
/** How often due attempts and new events are looked for when nothing wakes the dispatcher. */
const POLL_MS = 250;

export interface DispatcherDeps {
  queue: AttemptQueue;
  /** new events → pending deliveries (webhook-fanout.ts) */
  fanout: { run(): Promise<number> };
  outbound: OutboundHttp;
  secrets: SecretBox;
  clock: Clock;
  log: FastifyBaseLogger;
  /** WEBHOOK_CONCURRENCY */
  concurrency: number;
  /** WEBHOOK_ALLOW_PRIVATE */
  allowPrivate: boolean;
  userAgent: string;
  onOutcome?: (outcome: Exclude<AttemptOutcome, 'lost'>) => void;
  pollMs?: number;
}

/** Text a column takes: NUL (which PostgreSQL's text refuses) and the other controls but tab and newlines dropped. */
function printable(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    if (code >= 0x20 ? code !== 0x7f : code === 0x09 || code === 0x0a || code === 0x0d) out += ch;
  }
  return out;
}

type SendDeps = Pick<DispatcherDeps, 'outbound' | 'secrets' | 'clock' | 'log' | 'allowPrivate' | 'userAgent'>;

/** One attempt: the event POSTed, signed, to the hook's URL; what came of it (a cancel by shutdown throws). */
async function sendAttempt(deps: SendDeps, claimed: ClaimedAttempt, signal: AbortSignal): Promise<AttemptResult> {
  const { delivery } = claimed;
  const attemptedAt = deps.clock.now();
  const timestamp = Math.floor(attemptedAt / 1000);
  const started = performance.now();
  const secrets = claimed.secrets.map((s) => deps.secrets.open(s));
  const headers = {
    'content-type': 'application/json',
    'user-agent': deps.userAgent,
    'webhook-id': delivery.event_id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(secrets, delivery.event_id, timestamp, delivery.payload),
  };
  const took = () => Math.round(performance.now() - started);
  try {
    const res = await deps.outbound.request({
      url: claimed.url,
      method: 'POST',
      headers,
      body: delivery.payload,
      maxRedirects: 0,
      deadlineMs: DELIVERY_DEADLINE_MS,
      maxBodyBytes: RESPONSE_BODY_BYTES,
      onTooLarge: 'truncate',
      allowPrivate: deps.allowPrivate,
      signal,
    });
    const ok = res.status >= 200 && res.status < 300;
    return {
      attemptedAt,
      statusCode: res.status,
      durationMs: took(),
      error: ok ? null : `The receiver answered ${res.status}`,
      responseBody: printable(res.body.toString('utf8')),
      retryAfterMs: ok ? null : retryAfterMs(res.headers['retry-after'], attemptedAt),
    };
  } catch (err) {
    if (!(err instanceof OutboundError) || err.failure === 'cancelled') throw err;
    deps.log.info({ webhookId: delivery.webhook_id, detail: err.detail }, 'webhook delivery failed');
    const error =
      err.failure === 'address-not-allowed'
        ? 'WEBHOOK_TARGET_FORBIDDEN: the host resolves to an address that is not allowed'
        : `No delivery: ${err.message}`;
    return { attemptedAt, statusCode: null, durationMs: took(), error, responseBody: null, retryAfterMs: null };
  }
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
}

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
 */
async function lookForWork(deps: DispatcherDeps, pool: Pool, fanout: boolean, ended: () => void): Promise<boolean> {
  if (fanout) await deps.fanout.run();
  const held = pool.backlog.length + pool.inFlight.size + pool.toRecord.length + pool.inRecording;
  const room = 2 * deps.concurrency - held;
  if (room < Math.max(1, deps.concurrency / 2)) return false;
  const claimed = await deps.queue.claim(room, deps.clock.now(), DELIVERY_LEASE_MS);
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

/** Looks for work until there is no more, or no room. */
async function turns(deps: DispatcherDeps, pool: Pool, flags: TurnFlags, ended: () => void): Promise<void> {
  try {
    do {
      flags.again = false;
      const fanout = flags.fanoutWanted;
      flags.fanoutWanted = false;
      if (await lookForWork(deps, pool, fanout, ended)) flags.again = true;
    } while (flags.again && !flags.stopped);
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
 * Sends the attempts: POSTs the event with Standard Webhooks' headers through the outbound module (every address
 * checked at each delivery, the checked one connected, no redirects, 15 s), then records what came of it. Up to
 * `concurrency` in flight; woken when work is queued here, and every POLL_MS for the rest (other instances' events,
 * retries coming due, leases that ran out).
 */
export function createDispatcher(deps: DispatcherDeps) {
  const pool: Pool = {
    backlog: [],
    inFlight: new Map(),
    toRecord: [],
    inRecording: 0,
    recording: null,
    settled: new Set(),
  };
  const flags: TurnFlags = { again: false, fanoutWanted: true, stopped: true };
  let timer: NodeJS.Timeout | null = null;
  let wakeQueued = false;
  let ticking: Promise<void> | null = null;

  /** One run of looks for work at a time: a call during one asks it to look again, and shares it. */
  function tick(): Promise<void> {
    if (flags.stopped) return Promise.resolve();
    if (ticking) flags.again = true;
    else ticking = turns(deps, pool, flags, ended).finally(() => (ticking = null));
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
      await tick();
    },
    /** The attempts in flight, settled and recorded (tests). */
    idle: () => settledAll(pool),
    /** Stops looking, cancels what is in flight and lets it, and what waited, go for another instance. */
    async stop(): Promise<void> {
      flags.stopped = true;
      if (timer) clearInterval(timer);
      await drain(deps, pool);
    },
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
