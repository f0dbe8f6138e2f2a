import { describe, expect, it } from 'vitest';
import { createAttemptQueue, type AttemptResult } from '../../../src/modules/webhooks/webhook-attempts.js';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { createHook } from './webhooks.helpers.js';

const DAY = 86_400_000;

/**
 * The queue of attempts below the dispatcher (modules/webhooks/webhook-attempts.ts): what it claims, in which order,
 * and what recording a batch of outcomes writes. The attempts here are due ten days after the app's clock, so the
 * app's own dispatcher never sees them.
 */
describe.each(engines)('the webhook attempt queue on %s', (engine) => {
  const t = useTestApp(engine, { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const alice = useUser(t);
  const queue = () => createAttemptQueue({ db: t.storage.db, dialect: t.storage.dialect, random: () => 0.5 });

  async function setUp(dueIn: number[]) {
    const hook = await createHook(t, alice.token, { url: 'http://127.0.0.1:9/hook', events: ['link.created'] });
    const base = t.clock.now() + 10 * DAY;
    const ids: number[] = [];
    for (const [i, due] of dueIn.entries()) {
      const row = await t.storage.db
        .insertInto('webhook_deliveries')
        .values({
          webhook_id: hook.id,
          event_id: `evt_queue${i}`,
          event_type: 'link.created',
          payload: '{}',
          fanout_key: null,
          attempt: 1,
          first_due_at: base + due,
          due_at: base + due,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      ids.push(Number(row.id));
    }
    return { hookId: hook.id, base, ids };
  }
  const answered = (status: number, at: number): AttemptResult => ({
    attemptedAt: at,
    statusCode: status,
    durationMs: 3,
    error: status < 300 ? null : `The receiver answered ${status}`,
    responseBody: '',
    retryAfterMs: null,
  });
  const failingSince = async (hookId: number) =>
    (
      await t.storage.db
        .selectFrom('webhooks')
        .select('failing_since')
        .where('id', '=', hookId)
        .executeTakeFirstOrThrow()
    ).failing_since;

  it('when attempts are due, then they are claimed oldest due first, each once while its lease runs', async () => {
    const { base, ids } = await setUp([3, 1, 2, 60_000]);
    const q = queue();
    const now = base + 10;
    expect((await q.claim(2, now, 1_000)).map((c) => Number(c.delivery.id))).toEqual([ids[1], ids[2]]);
    expect((await q.claim(5, now, 1_000)).map((c) => Number(c.delivery.id))).toEqual([ids[0]]);
    expect(await q.claim(5, now + 500, 1_000)).toEqual([]);
    // the leases ran out: due again, oldest first; the one due later is still not due
    expect((await q.claim(5, now + 1_001, 1_000)).map((c) => Number(c.delivery.id))).toEqual([ids[1], ids[2], ids[0]]);
  });

  it("when a worker records an attempt whose lease another took over and recorded, then it is 'lost' and writes nothing", async () => {
    const { hookId, base } = await setUp([0]);
    const q = queue();
    const [late] = await q.claim(1, base, 1_000);
    const [taker] = await q.claim(1, base + 1_001, 1_000);
    expect(taker!.delivery.id).toBe(late!.delivery.id);
    expect(await q.recordMany([{ delivery: taker!.delivery, result: answered(204, base + 1_002) }])).toEqual([
      'delivered',
    ]);
    expect(await q.recordMany([{ delivery: late!.delivery, result: answered(500, base + 1_003) }])).toEqual(['lost']);
    const rows = await t.storage.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('webhook_id', '=', hookId)
      .execute();
    expect(rows).toHaveLength(1); // no retry scheduled by the lost failure
    expect(rows[0]).toMatchObject({ status_code: 204, error: null, claimed_until: null });
    expect(Number(rows[0]!.attempted_at)).toBe(base + 1_002);
    expect(await failingSince(hookId)).toBeNull();
  });

  it('when a batch records failures and successes of one hook, then its failing streak follows their order', async () => {
    const { hookId, base } = await setUp([0, 0, 0, 0]);
    const q = queue();
    const claimed = await q.claim(4, base, 60_000);
    const [a, b, c, d] = claimed.map((x) => x.delivery);
    // a failure then a success: the streak the failure started is ended
    expect(
      await q.recordMany([
        { delivery: a!, result: answered(500, base + 1) },
        { delivery: b!, result: answered(200, base + 2) },
      ]),
    ).toEqual(['retried', 'delivered']);
    expect(await failingSince(hookId)).toBeNull();
    // a success then a failure: the failure starts a streak at its own time
    expect(
      await q.recordMany([
        { delivery: c!, result: answered(204, base + 3) },
        { delivery: d!, result: answered(503, base + 4) },
      ]),
    ).toEqual(['delivered', 'retried']);
    expect(Number(await failingSince(hookId))).toBe(base + 4);
    // each failure scheduled its next attempt, with what the receiver answered kept on the one made
    const retries = await t.storage.db
      .selectFrom('webhook_deliveries')
      .select(['event_id', 'attempt'])
      .where('webhook_id', '=', hookId)
      .where('attempted_at', 'is', null)
      .orderBy('id')
      .execute();
    expect(retries.map((r) => [r.event_id, Number(r.attempt)])).toEqual([
      [a!.event_id, 2],
      [d!.event_id, 2],
    ]);
  });
});
