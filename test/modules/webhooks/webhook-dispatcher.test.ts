import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { OutboundHttp } from '../../../src/infra/outbound-http.js';
import { systemClock } from '../../../src/lib/clock.js';
import type { AttemptQueue, ClaimedAttempt } from '../../../src/modules/webhooks/webhook-attempts.js';
import { BUSY_LOOK_MS, createDispatcher, type Dispatcher } from '../../../src/modules/webhooks/webhook-dispatcher.js';
import { createSecretBox, newWebhookSecret } from '../../../src/modules/webhooks/webhook-secret.js';

/**
 * The dispatcher giving way to visits (SPEC §22 beside §8): while the process is busy serving, it looks for work at
 * most once a BUSY_LOOK_MS, for one set of places, and fans new events out a turn at a time once the due attempts ran
 * dry; when the load eases it takes up its full pace again. The queue, fan-out and receiver are stand-ins that count
 * what the dispatcher asks of them (the database's side is webhook-attempts.test.ts's).
 */

const CONCURRENCY = 4;
const box = createSecretBox(randomBytes(32));
const sealed = box.seal(newWebhookSecret());

interface Claim {
  limit: number;
  at: number;
  got: number;
}

/** A queue of `pending` due attempts, delivered at once by a receiver that answers 204. */
function standIns(pending: number) {
  const claims: Claim[] = [];
  /** each run of the fan-out: whether it would go on after its first turn */
  const fanouts: Array<{ more: boolean; at: number }> = [];
  let next = 1;
  let delivered = 0;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const queue = {
    async claim(limit: number): Promise<ClaimedAttempt[]> {
      const got = Math.min(limit, pending);
      pending -= got;
      claims.push({ limit, at: performance.now(), got });
      return Array.from({ length: got }, () => {
        const id = next++;
        return {
          url: 'https://hooks.example/ferry',
          secrets: [sealed],
          delivery: { id, webhook_id: 1, event_id: `evt_${id}`, payload: '{}' },
        } as unknown as ClaimedAttempt;
      });
    },
    async recordMany(batch: readonly unknown[]) {
      delivered += batch.length;
      for (const w of [...waiters])
        if (delivered >= w.count) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      return batch.map(() => 'delivered' as const);
    },
    async release() {},
  } as unknown as AttemptQueue;
  const outbound: OutboundHttp = {
    request: async (req) => ({ status: 204, headers: {}, body: Buffer.alloc(0), truncated: false, url: req.url }),
  };
  return {
    claims,
    fanouts,
    queue,
    outbound,
    fanout: {
      async run(more: () => boolean = () => true) {
        fanouts.push({ more: more(), at: performance.now() });
        return 0;
      },
    },
    /** resolves once `count` attempts have been recorded */
    delivered: (count: number) =>
      delivered >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
    addPending: (n: number) => (pending += n),
  };
}

describe('the webhook dispatcher under a serving load', () => {
  let dispatcher: Dispatcher | null = null;
  afterEach(async () => {
    await dispatcher?.stop();
    dispatcher = null;
  });

  function start(s: ReturnType<typeof standIns>, busy: () => boolean) {
    dispatcher = createDispatcher({
      queue: s.queue,
      fanout: s.fanout,
      outbound: s.outbound,
      secrets: box,
      clock: systemClock,
      log: pino({ level: 'silent' }),
      concurrency: CONCURRENCY,
      allowPrivate: false,
      userAgent: 'test',
      pollMs: 20,
      busy,
    });
    dispatcher.start();
    return dispatcher;
  }

  it('when the process is busy serving, then one set of places a second, and a fan-out once the queue ran dry', async () => {
    const s = standIns(1_000);
    start(s, () => true);
    await s.delivered(3 * CONCURRENCY);

    const asked = s.claims.filter((c) => c.got > 0);
    expect(asked.length).toBeGreaterThanOrEqual(3);
    for (const c of s.claims) expect(c.limit).toBeLessThanOrEqual(CONCURRENCY);
    // One look a second. The pace counts from a look's start, and a look's claim comes after what it does first
    // (the start's look fans out first): some milliseconds on a loaded machine (992 ms apart once in CI), hence
    // 100 ms of slack. A dispatcher that did not give way would claim at every poll, 20 ms apart.
    for (let i = 1; i < s.claims.length; i += 1)
      expect(s.claims[i]!.at - s.claims[i - 1]!.at).toBeGreaterThan(BUSY_LOOK_MS - 100);
    // the start's look fans out (nothing was claimed before it); after that, not while attempts were still due
    expect(s.fanouts.every((f) => !f.more)).toBe(true);
    expect(s.fanouts).toHaveLength(1);
  });

  it('when the load eases, then it looks again at once at its full pace (two sets of places, every event fanned out)', async () => {
    const s = standIns(1_000);
    let busy = true;
    start(s, () => busy);
    await s.delivered(CONCURRENCY);
    const before = s.claims.length;
    busy = false;
    // new events are written (as the change writers' wake-up does): the next look fans them out at full pace
    dispatcher!.wake();
    await s.delivered(1_000);

    const after = s.claims.slice(before);
    expect(after.some((c) => c.limit === 2 * CONCURRENCY)).toBe(true);
    // 1,000 attempts at four or eight a claim in well under the 125 s one look a second would take
    expect(after.length).toBeGreaterThan(100);
    expect(s.fanouts.some((f) => f.more)).toBe(true);
  });

  it('when the busy queue runs dry, then the next look fans out one turn of new events', async () => {
    const s = standIns(CONCURRENCY - 1); // the first claim finds fewer than its places: the queue ran dry
    start(s, () => true);
    await s.delivered(CONCURRENCY - 1);
    const fannedBefore = s.fanouts.length;
    s.addPending(CONCURRENCY - 1); // what the next turn of the fan-out makes due
    await s.delivered(2 * (CONCURRENCY - 1));

    const later = s.fanouts.slice(fannedBefore);
    expect(later.length).toBeGreaterThanOrEqual(1);
    expect(later.every((f) => !f.more)).toBe(true);
  });
});
