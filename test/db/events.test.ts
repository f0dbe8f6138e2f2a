import { describe, expect, it } from 'vitest';
import {
  findEventPosition,
  openEventsCursor,
  recordPublicEvents,
  sweepEvents,
  type PublicEventInput,
} from '../../src/db/events.js';
import { engines } from '../helpers/app.js';
import { useTestApp } from '../helpers/fixtures.js';

/**
 * SPEC §22's public events (db/events.ts, migration 043): written in the caller's transaction as whole envelopes,
 * read in order from a place, found by their `evt_…` id, swept past their retention.
 */
describe.each(engines)('the public events on %s', (engine) => {
  const t = useTestApp(engine);
  const event = (n: number): PublicEventInput => ({
    type: 'link.created',
    data: { n },
    userId: null,
    linkId: n,
  });

  it('when events are recorded, then a cursor reads their envelopes in order and their ids find them', async () => {
    const { db, dialect } = t.storage;
    const cursor = await openEventsCursor(db, 'end');
    const written = await db.transaction().execute((tx) => recordPublicEvents(tx, dialect, [event(1), event(2)]));
    expect(written.map((e) => e.id)).toEqual([expect.stringMatching(/^evt_[A-Za-z0-9_-]{22}$/), expect.any(String)]);
    expect(new Date(written[0]!.timestamp).toISOString()).toBe(written[0]!.timestamp);
    const read = await cursor.read();
    expect(read.map((e) => e.event)).toEqual(written);
    expect(read.map((e) => e.linkId)).toEqual([1, 2]);
    expect(await findEventPosition(db, written[1]!.id)).toBe(read[1]!.seq);
    expect(await findEventPosition(db, 'evt_unknown')).toBeNull();
    const resumed = await openEventsCursor(db, { after: read[0]!.seq });
    expect((await resumed.read()).map((e) => e.event.id)).toEqual([written[1]!.id]);
  });

  it('when the transaction rolls back, then no event is left', async () => {
    const { db, dialect } = t.storage;
    const cursor = await openEventsCursor(db, 'end');
    await expect(
      db.transaction().execute(async (tx) => {
        await recordPublicEvents(tx, dialect, [event(3)]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await cursor.read()).toEqual([]);
  });

  it('when events are older than the retention, then the sweep removes them only', async () => {
    const { db, dialect } = t.storage;
    const cursor = await openEventsCursor(db, 'end');
    await recordPublicEvents(db, dialect, [event(4)], { at: 1_000 });
    const kept = await recordPublicEvents(db, dialect, [event(5)]);
    expect(await sweepEvents(db, 2_000)).toBeGreaterThanOrEqual(1);
    expect((await cursor.read()).map((e) => e.event.id)).toEqual([kept[0]!.id]);
  });
});
