import { AsyncLocalStorage } from 'node:async_hooks';
import { availableParallelism } from 'node:os';

/**
 * Password hashing (scrypt) with a bounded concurrency, shared fairly between requests (SPEC §17: four callers
 * hashing at once never delay another caller's login by more than one hash time).
 *
 * A lane is one request's hashing (plugins/password-hash-budget.ts opens it; a hash outside any request gets a
 * lane of its own). At most `concurrency` hashes run at once; when one ends, the next to start is the oldest
 * waiting hash of the lane that has started the fewest so far. A login (one hash, a lane of its own) therefore
 * waits for one running hash to end at most, however many hashes bulk creations have queued; libuv's thread
 * pool alone would run them in arrival order.
 *
 * A lane whose client has gone starts nothing more: its waiting hashes fail, so a request the client gave up on
 * stops before it writes (a bulk creation hashes every password before it inserts anything).
 */
export interface HashLanes {
  /** Runs `work` (one hash) in the current request's lane when a place is free. */
  schedule<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Runs `next` (the rest of a request) in a new lane; `gone()` says its client has gone, `close()` that the
   * request has ended (its answer sent, or its client gone).
   */
  enter(next: () => void): { gone(): void; close(): void };
  /**
   * hashes waiting for a place, running, and dropped since the start because their client had gone; lanes
   * open (entered, not yet closed)
   */
  status(): { waiting: number; running: number; dropped: number; lanes: number };
}

export interface Lane {
  started: number;
  waiting: Array<{ start(): void; fail(err: Error): void }>;
  gone: boolean;
}

/**
 * Two at least, so that a login's two checks (an outdated hash and the decoy, modules/tokens/tokens.service.ts)
 * run side by side and take as long as one; below libuv's 4 threads, so file and DNS work (which share them)
 * always find one free; one less than the cores past that, so the event loop keeps one.
 */
export const defaultHashConcurrency = (): number => Math.min(Math.max(2, availableParallelism() - 1), 3);

/**
 * Not an AppError: a bulk creation records an AppError as one item's result and goes on with the others; this
 * one ends the whole request. Its answer goes nowhere (the client has gone); the error handler logs it at info
 * as a 4xx (499: "client closed request").
 */
export class ClientGoneError extends Error {
  readonly statusCode = 499;
  constructor() {
    super('The client closed the connection before the passwords were hashed');
    this.name = 'ClientGoneError';
  }
}

const clientGone = (): ClientGoneError => new ClientGoneError();

/**
 * The lanes' storage, enabled only while a lane is open. While an AsyncLocalStorage is enabled, Node 20 and 22
 * run a hook at every promise the process makes, to carry its store along: after the first login every request
 * paid for it (bench/ user-read: about 11 µs of the main thread's 220 µs a request, in `promiseInitHook` and
 * `_propagate`). Entering a lane enables it; the last lane to close disables it (a continuation that outlives
 * its request then hashes in a lane of its own). Node 24 carries stores in async context frames, without a hook:
 * there a continuation keeps the lane it was made in, and disabling costs and saves nothing.
 */
function openLanes(storage: AsyncLocalStorage<Lane>) {
  let open = 0;
  return {
    count: () => open,
    /** Runs `rest` in `lane`; the function returned closes it (once). */
    enter(lane: Lane, rest: () => void): () => void {
      let closed = false;
      open += 1;
      storage.run(lane, rest);
      return () => {
        if (closed) return;
        closed = true;
        open -= 1;
        if (open === 0) storage.disable();
      };
    },
  };
}

/** `storage`: the lanes' AsyncLocalStorage (a test passes its own to look into it). */
export function createHashLanes(
  concurrency = defaultHashConcurrency(),
  current: AsyncLocalStorage<Lane> = new AsyncLocalStorage<Lane>(),
): HashLanes {
  // Lanes with waiting hashes; a Set keeps the order in which they came, which breaks ties.
  const ready = new Set<Lane>();
  let running = 0;
  let waiting = 0;
  let dropped = 0;
  const open = openLanes(current);
  const newLane = (): Lane => ({ started: 0, waiting: [], gone: false });

  function next(): Lane | undefined {
    let best: Lane | undefined;
    for (const lane of ready) if (best === undefined || lane.started < best.started) best = lane;
    return best;
  }

  function pump(): void {
    for (let lane = next(); lane !== undefined && running < concurrency; lane = next()) {
      const job = lane.waiting.shift()!;
      if (lane.waiting.length === 0) ready.delete(lane);
      waiting -= 1;
      lane.started += 1;
      running += 1;
      job.start();
    }
  }

  return {
    schedule<T>(work: () => Promise<T>): Promise<T> {
      const lane = current.getStore() ?? newLane();
      if (lane.gone) return Promise.reject(clientGone());
      return new Promise<T>((resolve, reject) => {
        const start = (): void => {
          void new Promise<T>((r) => r(work())).then(resolve, reject).finally(() => {
            running -= 1;
            pump();
          });
        };
        lane.waiting.push({ start, fail: reject });
        waiting += 1;
        ready.add(lane);
        pump();
      });
    },
    enter(rest) {
      const lane = newLane();
      return {
        close: open.enter(lane, rest),
        gone() {
          lane.gone = true;
          ready.delete(lane);
          waiting -= lane.waiting.length;
          dropped += lane.waiting.length;
          for (const job of lane.waiting.splice(0)) job.fail(clientGone());
        },
      };
    },
    status: () => ({ waiting, running, dropped, lanes: open.count() }),
  };
}
