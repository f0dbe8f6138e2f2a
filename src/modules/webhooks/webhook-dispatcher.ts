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

/** The attempts in flight: each one's cancel, and its promise (settled once recorded). */
interface Pool {
  inFlight: Map<number, AbortController>;
  settled: Set<Promise<void>>;
}

/** An attempt made and recorded; a cancelled one (shutdown) or one the database did not take is left to its lease. */
async function attempt(deps: DispatcherDeps, pool: Pool, claimed: ClaimedAttempt, controller: AbortController) {
  const id = Number(claimed.delivery.id);
  try {
    const result = await sendAttempt(deps, claimed, controller.signal);
    const outcome = await deps.queue.record(claimed.delivery, result);
    if (outcome !== 'lost') deps.onOutcome?.(outcome);
  } catch (err) {
    if (!(err instanceof OutboundError && err.failure === 'cancelled'))
      deps.log.error(
        { err, deliveryId: id },
        'a webhook delivery could not be recorded; it is retried after its lease',
      );
  } finally {
    pool.inFlight.delete(id);
  }
}

/** One look for work: new events fanned out, then as many due attempts claimed as there are free places. */
async function lookForWork(deps: DispatcherDeps, pool: Pool, wake: () => void): Promise<boolean> {
  await deps.fanout.run();
  const free = deps.concurrency - pool.inFlight.size;
  if (free <= 0) return false;
  const claimed = await deps.queue.claim(free, deps.clock.now(), DELIVERY_LEASE_MS);
  for (const c of claimed) {
    const controller = new AbortController();
    pool.inFlight.set(Number(c.delivery.id), controller);
    const p = attempt(deps, pool, c, controller).finally(() => {
      pool.settled.delete(p);
      wake();
    });
    pool.settled.add(p);
  }
  return claimed.length === free; // there may be more
}

/**
 * Sends the attempts: POSTs the event with Standard Webhooks' headers through the outbound module (every address
 * checked at each delivery, the checked one connected, no redirects, 15 s), then records what came of it. Up to
 * `concurrency` in flight; woken when work is queued here, and every POLL_MS for the rest (other instances' events,
 * retries coming due, leases that ran out).
 */
export function createDispatcher(deps: DispatcherDeps) {
  const pool: Pool = { inFlight: new Map(), settled: new Set() };
  let timer: NodeJS.Timeout | null = null;
  let ticking = false;
  let again = false;
  let stopped = true;
  let wakeQueued = false;

  async function tick(): Promise<void> {
    if (stopped) return;
    if (ticking) {
      again = true;
      return;
    }
    ticking = true;
    try {
      for (;;) {
        again = false;
        const more = await lookForWork(deps, pool, wake);
        if (stopped || !(more || again)) break;
      }
    } catch (err) {
      deps.log.error({ err }, 'webhook dispatch failed; trying again shortly');
    } finally {
      ticking = false;
    }
  }

  /** Looks for work now (coalesced: many wake-ups in one turn of the event loop make one look). */
  function wake(): void {
    if (stopped || wakeQueued) return;
    wakeQueued = true;
    setImmediate(() => {
      wakeQueued = false;
      void tick();
    });
  }

  return {
    start(): void {
      if (!stopped) return;
      stopped = false;
      timer = setInterval(() => void tick(), deps.pollMs ?? POLL_MS);
      timer.unref();
      wake();
    },
    wake,
    /** Runs one look for work now and waits for it (tests; an operator's nudge). */
    tick,
    /** The attempts in flight, settled (tests). */
    async idle(): Promise<void> {
      while (pool.settled.size) await Promise.allSettled([...pool.settled]);
    },
    /** Stops looking, cancels what is in flight and lets it go for another instance (or the next start). */
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearInterval(timer);
      const ids = [...pool.inFlight.keys()];
      for (const c of pool.inFlight.values()) c.abort();
      await Promise.allSettled([...pool.settled]);
      await deps.queue
        .release(ids)
        .catch((err: unknown) => deps.log.warn({ err }, 'could not release webhook attempts'));
    },
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
