import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { createHook, linkCreated, settleAllDue, startReceiver, writeEvents } from './webhooks.helpers.js';

/**
 * Issue 40's must-show: "a receiver that answers 500 for a minute then recovers gets every event exactly as often
 * as it was retried, in the log". The minute is the test clock's (the dispatcher's due times and the receiver's
 * answer both read it), so the test takes seconds; FERRY_LONG_TESTS=1 (CI) sends ten times the events.
 */
const LONG = process.env.FERRY_LONG_TESTS === '1';
const EVENTS_PER_STEP = LONG ? 100 : 10;
const STEP_MS = 5_000;
const DOWN_MS = 60_000;
/** events are written every STEP_MS through the minute and half a minute after it */
const WRITING_MS = 90_000;

interface Attempt {
  event_id: string;
  attempt: number;
  attempted_at: string | null;
  status_code: number | null;
  next_attempt_at: string | null;
}

describe.each(engines)('a receiver down for a minute on %s', (engine) => {
  const t = useTestApp(engine, { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const alice = useUser(t);

  /** The hook's delivery log, every page, as the API shows it. */
  async function log(hookId: number): Promise<Attempt[]> {
    const all: Attempt[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const res = await t.request({
        url: `/api/v1/webhooks/${hookId}/deliveries?limit=100${query}`,
        token: alice.token,
      });
      expect(res.status, res.text).toBe(200);
      all.push(...(res.body.data as Attempt[]));
      cursor = res.body.pagination.nextCursor as string | null;
    } while (cursor);
    return all;
  }

  it(
    'when the receiver answers 500 for a minute and then recovers, then every event arrives, and it got each event exactly as many times as the log has attempts of it',
    { timeout: LONG ? 600_000 : 120_000 },
    async () => {
      t.clock.ms = Date.now();
      const start = t.clock.now();
      const upAt = start + DOWN_MS;
      const r = await startReceiver([], () => ({ status: t.clock.now() < upAt ? 500 : 204, body: 'down' }));
      try {
        const hook = await createHook(t, alice.token, { url: r.url, events: ['link.created'] });
        let written = 0;
        for (let at = 0; at <= WRITING_MS; at += STEP_MS) {
          const batch = Array.from({ length: EVENTS_PER_STEP }, (_, i) => linkCreated(alice.id, `o${at / 1000}x${i}`));
          await writeEvents(t, batch);
          written += batch.length;
          await settleAllDue(t);
          t.clock.advance(STEP_MS);
        }
        // The attempts that failed twice come due 5 min (± 10 %) after their second.
        t.clock.advance(6 * 60_000);
        await settleAllDue(t);

        const received = new Map<string, number>();
        for (const got of r.received) {
          const id = String(got.headers['webhook-id']);
          received.set(id, (received.get(id) ?? 0) + 1);
        }
        const attempts = await log(hook.id);
        const made = new Map<string, Attempt[]>();
        for (const a of attempts) made.set(a.event_id, [...(made.get(a.event_id) ?? []), a]);

        // every event arrived, and nothing is left to try
        expect(received.size).toBe(written);
        expect(attempts.filter((a) => a.attempted_at === null)).toEqual([]);
        // as often as the log says it was tried: the first attempt and each retry
        for (const [id, count] of received) expect(made.get(id)?.length, id).toBe(count);
        expect(r.received.length).toBe(attempts.length);
        for (const [id, chain] of made) {
          const ordered = chain.sort((a, b) => a.attempt - b.attempt);
          expect(
            ordered.map((a) => a.attempt),
            id,
          ).toEqual(ordered.map((_, i) => i + 1));
          // 500 while the receiver was down, then the one success, which ends the chain
          for (const a of ordered.slice(0, -1)) {
            expect(a.status_code, id).toBe(500);
            expect(Date.parse(a.attempted_at!), id).toBeLessThan(upAt);
            expect(a.next_attempt_at, id).not.toBeNull();
          }
          const last = ordered.at(-1)!;
          expect(last.status_code, id).toBe(204);
          expect(Date.parse(last.attempted_at!), id).toBeGreaterThanOrEqual(upAt);
          expect(last.next_attempt_at, id).toBeNull();
        }
        // the minute did fail some: events written while it lasted were retried, those after it were not
        const retried = [...made.values()].filter((chain) => chain.length > 1).length;
        expect(retried).toBe((DOWN_MS / STEP_MS) * EVENTS_PER_STEP);
        const hookNow = await t.request({ url: `/api/v1/webhooks/${hook.id}`, token: alice.token });
        expect(hookNow.body).toMatchObject({ enabled: true, disabled_reason: null });
      } finally {
        await r.close();
      }
    },
  );
});
