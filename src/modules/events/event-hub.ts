import type { Kysely } from 'kysely';
import { findEventPosition, openEventsCursor, type EventsCursor, type StoredEvent } from '../../db/events.js';
import type { Database } from '../../db/types.js';

/**
 * The live stream's fan-out (SPEC §22): ONE cursor over the `events` table per process, read on a short tick while
 * anyone listens (and at once when this process says it wrote), whose events go to every subscriber that may see
 * them. A thousand subscribers cost one read per tick, not a thousand; and an event is offered only to those who
 * may hear of it (its owner's streams, and those that hear of everyone's: admins), not to every open stream — a
 * visit's `link.clicked` went past a thousand other users' streams before. A subscriber that resumes (Last-Event-ID)
 * first reads from its own place with a cursor of its own until it has caught up, while what the shared cursor
 * brings meanwhile waits for it (deduplicated by event id), then joins the fan-out.
 *
 * Memory is bounded per subscriber: what it has not taken yet is its socket's buffer (`pending()`); past
 * `maxBufferedBytes` it is dropped with a final comment (a reader that cannot keep up reconnects with
 * Last-Event-ID and catches up from the table instead of from this process's memory).
 */
export interface EventSink {
  /** the one user whose events it may hear of (absent: anyone's, as an admin; `accepts` decides either way) */
  userId?: number;
  /** may this subscriber see the event (ownership, types) */
  accepts(e: StoredEvent): boolean;
  /** writes one SSE chunk; false: the socket's buffer is past its bound (dropped) */
  write(chunk: string): boolean;
  /** bytes written and not yet taken by the client */
  pending(): number;
  /** ends the stream after `comment` */
  end(comment: string): void;
}

export interface EventHubOptions {
  /** how often the shared cursor reads while anyone listens (default 250 ms) */
  pollMs?: number;
  /** the comment heartbeat's interval (SPEC §22: 15 s) */
  heartbeatMs?: number;
  /** a subscriber's unsent bytes past which it is dropped (default 1 MiB) */
  maxBufferedBytes?: number;
  /** the events table is written in commit order (SQLite): no late commits to watch for */
  lateCommits?: boolean;
  log?: { warn(obj: object, msg: string): void };
}

/** One SSE message: the event id and the whole event as data. */
export const sseMessage = (e: StoredEvent): string => `id: ${e.event.id}\ndata: ${JSON.stringify(e.event)}\n\n`;

interface Subscriber {
  sink: EventSink;
  /** while catching up: the shared cursor's events, waiting */
  waiting: StoredEvent[] | null;
}

/**
 * Reads a resuming subscriber's own backlog from its place, then lets it join the fan-out: what the shared cursor
 * brought meanwhile (`s.waiting`) follows, but what the backlog already sent (deduplicated by event id).
 */
async function catchUp(
  db: Kysely<Database>,
  cursorOpts: { lateCommits?: boolean },
  s: Subscriber,
  after: number,
  to: { live(): boolean; send(e: StoredEvent): void },
): Promise<void> {
  const own = await openEventsCursor(db, { after }, cursorOpts);
  const sent = new Set<string>();
  for (;;) {
    const batch = await own.read(1_000);
    for (const e of batch) {
      // a slow reader catching up is dropped like any other: its socket's buffer is the bound
      if (!to.live()) return;
      sent.add(e.event.id);
      to.send(e);
    }
    if (batch.length === 0) break;
  }
  const waiting = s.waiting ?? [];
  s.waiting = null;
  for (const e of waiting) if (to.live() && !sent.has(e.event.id)) to.send(e);
}

/** Runs `read` on each wake-up, one at a time: a wake-up during a read asks for one more after it. */
function oneReadAtATime(read: () => Promise<void>, log: EventHubOptions['log']) {
  let reading: Promise<void> | null = null;
  let again = false;
  const wake = (): void => {
    if (reading) {
      again = true;
      return;
    }
    reading = read()
      .catch((err: unknown) => log?.warn({ err }, 'events stream: read failed (retried on the next tick)'))
      .finally(() => {
        reading = null;
        if (again) {
          again = false;
          wake();
        }
      });
  };
  return { wake, idle: async () => reading ?? undefined };
}

/** The shared cursor's poll and the heartbeat, running while anyone listens. */
function ticker(poll: () => void, beat: () => void, pollMs: number, heartbeatMs: number) {
  let timers: NodeJS.Timeout[] = [];
  return {
    start() {
      timers = [setInterval(poll, pollMs), setInterval(beat, heartbeatMs)];
      for (const t of timers) t.unref();
    },
    stop() {
      for (const t of timers) clearInterval(t);
      timers = [];
    },
  };
}

// One closure over the hub's shared state (subscribers, cursor): split further it would pass that state around.
// eslint-disable-next-line max-lines-per-function
export function createEventHub(db: Kysely<Database>, opts: EventHubOptions = {}) {
  const pollMs = opts.pollMs ?? 250;
  const heartbeatMs = opts.heartbeatMs ?? 15_000;
  const maxBuffered = opts.maxBufferedBytes ?? 1024 * 1024;
  const cursorOpts = opts.lateCommits === undefined ? {} : { lateCommits: opts.lateCommits };
  const subscribers = new Set<Subscriber>();
  /** the subscribers an event may concern: those of one user, by id, and those of anyone's (admins) */
  const byUser = new Map<number, Set<Subscriber>>();
  const ofAnyone = new Set<Subscriber>();
  const add = (s: Subscriber): void => {
    subscribers.add(s);
    const user = s.sink.userId;
    if (user === undefined) ofAnyone.add(s);
    else if (byUser.has(user)) byUser.get(user)!.add(s);
    else byUser.set(user, new Set([s]));
  };
  /** false: it had gone already */
  const remove = (s: Subscriber): boolean => {
    if (!subscribers.delete(s)) return false;
    const user = s.sink.userId;
    if (user === undefined) ofAnyone.delete(s);
    else if (byUser.get(user)?.delete(s) && byUser.get(user)!.size === 0) byUser.delete(user);
    return true;
  };
  let cursor: Promise<EventsCursor> | null = null;
  let closed = false;

  const drop = (s: Subscriber, why: string): void => {
    remove(s);
    s.sink.end(why);
    if (subscribers.size === 0) idle();
  };

  /** `message`: the event's SSE text, made once for all its subscribers */
  const send = (s: Subscriber, e: StoredEvent, message?: () => string): void => {
    if (!s.sink.accepts(e)) return;
    if (!s.sink.write(message ? message() : sseMessage(e)) || s.sink.pending() > maxBuffered)
      drop(s, 'dropped: the client reads too slowly; reconnect with Last-Event-ID');
  };
  /** Offers the event to whom it may concern (a Set's iteration survives a drop on the way). */
  const offer = (e: StoredEvent): void => {
    let text: string | null = null;
    const message = () => (text ??= sseMessage(e));
    const deliver = (s: Subscriber) => (s.waiting ? s.waiting.push(e) : send(s, e, message));
    for (const s of ofAnyone) deliver(s);
    const owners = e.userId === null ? undefined : byUser.get(e.userId);
    if (owners) for (const s of owners) deliver(s);
  };

  const reader = oneReadAtATime(async () => {
    const c = await cursor!;
    for (;;) {
      const batch = await c.read(1_000);
      for (const e of batch) offer(e);
      if (batch.length < 1_000) return;
    }
  }, opts.log);
  const wake = (): void => {
    if (!closed && cursor !== null) reader.wake();
  };

  const ticks = ticker(
    wake,
    () => {
      for (const s of [...subscribers]) if (!s.sink.write(': heartbeat\n\n')) drop(s, 'dropped');
    },
    pollMs,
    heartbeatMs,
  );
  const start = (): void => {
    if (cursor) return;
    cursor = openEventsCursor(db, 'end', cursorOpts);
    cursor.catch(() => (cursor = null));
    ticks.start();
  };
  /** Nobody listens: the cursor is let go (the next subscriber opens one at the end again). */
  function idle(): void {
    ticks.stop();
    cursor = null;
  }

  return {
    /**
     * A new subscriber, from now or after the position `after` (a resumed stream); answers its unsubscribe.
     * The shared cursor is open before this resolves, so nothing committed after it is missed.
     */
    async subscribe(sink: EventSink, after: number | null = null): Promise<() => void> {
      const closing = 'closing: the server shuts down; reconnect with Last-Event-ID';
      const none = (): void => undefined;
      if (closed) return (sink.end(closing), none);
      start();
      await cursor;
      // the app began to close while the cursor opened: this stream must not hold the shutdown
      if (closed) return (sink.end(closing), none);
      const s: Subscriber = { sink, waiting: after === null ? null : [] };
      add(s);
      if (after !== null)
        void catchUp(db, cursorOpts, s, after, { live: () => subscribers.has(s), send: (e) => send(s, e) }).catch(
          (err: unknown) => {
            opts.log?.warn({ err }, 'events stream: resuming failed');
            drop(s, 'error: resuming failed; reconnect');
          },
        );
      return () => {
        if (remove(s) && subscribers.size === 0) idle();
      };
    },

    /** This process wrote events: read them now rather than at the next tick. */
    wake,

    /** The position of a `Last-Event-ID`; null: unknown, or swept past the retention. */
    positionOf: (eventId: string) => findEventPosition(db, eventId),

    get subscribers() {
      return subscribers.size;
    },

    /** Ends every stream (the app closes: open streams must not hold the server's shutdown). */
    async close(): Promise<void> {
      closed = true;
      for (const s of [...subscribers]) drop(s, 'closing: the server shuts down; reconnect with Last-Event-ID');
      idle();
      await reader.idle();
    },
  };
}

export type EventHub = ReturnType<typeof createEventHub>;
