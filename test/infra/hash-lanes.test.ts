import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { createHashLanes, type Lane } from '../../src/infra/hash-lanes.js';

/** A continuation made inside a lane, run when `release` is called: what it sees of the lanes' storage then. */
function continuationIn<T>(storage: AsyncLocalStorage<T>) {
  let release!: () => void;
  const seen = new Promise<void>((resolve) => (release = resolve)).then(() => storage.getStore());
  return { release, seen };
}

/**
 * Whether this Node carries stores in async context frames (Node 24 by default): a continuation keeps the frame
 * it was made in, and `disable()` has no hook to turn off. Node 20 and 22 carry them by a hook at every promise,
 * which `disable()` stops, so that a continuation made before sees no store after.
 */
async function framesKeepStores(): Promise<boolean> {
  const probe = new AsyncLocalStorage<string>();
  let seen!: ReturnType<typeof continuationIn<string>>;
  probe.run('lane', () => (seen = continuationIn(probe)));
  probe.disable();
  seen.release();
  return (await seen.seen) !== undefined;
}

describe('hash lanes (infra/hash-lanes.ts)', () => {
  it('carry a request’s lane to its continuations while any lane is open, and stop carrying when the last closes', async () => {
    const storage = new AsyncLocalStorage<Lane>();
    const lanes = createHashLanes(2, storage);
    let early!: ReturnType<typeof continuationIn<Lane>>;
    let late!: ReturnType<typeof continuationIn<Lane>>;
    const a = lanes.enter(() => {
      early = continuationIn(storage);
      late = continuationIn(storage);
    });
    const b = lanes.enter(() => undefined);
    expect(lanes.status().lanes).toBe(2);

    a.close();
    a.close(); // once only
    expect(lanes.status().lanes).toBe(1);
    early.release();
    // b is still open: the storage still carries lanes, a's included.
    expect(await early.seen).toMatchObject({ started: 0, gone: false });

    b.close();
    expect(lanes.status().lanes).toBe(0);
    late.release();
    if (await framesKeepStores()) {
      // Node 24's frames: no hook to turn off; the continuation keeps the lane it was made in.
      expect(await late.seen).toMatchObject({ started: 0 });
    } else {
      // No lane open: the storage is off (no hook runs at every promise), and a continuation sees no lane.
      expect(await late.seen).toBeUndefined();
    }

    // The next lane turns it on again; hashing works throughout.
    let again!: ReturnType<typeof continuationIn<Lane>>;
    const c = lanes.enter(() => (again = continuationIn(storage)));
    again.release();
    expect(await again.seen).toMatchObject({ started: 0 });
    expect(await lanes.schedule(async () => 'hashed')).toBe('hashed');
    c.close();
    await new Promise(setImmediate); // the hash's place is given back after its answer
    expect(lanes.status()).toEqual({ waiting: 0, running: 0, dropped: 0, lanes: 0 });
  });
});
