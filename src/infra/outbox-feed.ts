import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import { pgDriver } from '../db/pg-driver.js';
import { OUTBOX_CHANNEL, openOutboxCursor, type OutboxCursor, type OutboxEntry } from '../db/outbox.js';
import type { Database } from '../db/types.js';

/**
 * What a consumer of the outbox's feed does (the redirect cache and the domain registry, app-lifecycle.ts):
 * applies the events of other instances and processes, and starts afresh when it may have missed some.
 */
export interface OutboxFeedConsumer {
  /** an event committed by another instance (or by none in particular: its origin is null) */
  apply(entry: OutboxEntry): void;
  /** the feed (re)starts at the outbox's end: what changed before is unknown, drop what may be stale */
  restart(): Promise<void>;
  /** PostgreSQL: the consumer serves from what it holds only while this says the feed is caught up */
  gate?(isTrusted: () => boolean): void;
}

interface FeedOptions {
  db: Kysely<Database>;
  /** this instance's origin in the outbox: its own events are applied by itself, not heard again */
  origin: string;
  consumer: OutboxFeedConsumer;
  log: FastifyBaseLogger;
}

const ROWS_PER_READ = 1_000;

/** Reads every event after the cursor and applies those that are not this instance's own. */
async function drain(cursor: OutboxCursor, { origin, consumer }: FeedOptions): Promise<void> {
  for (;;) {
    const entries = await cursor.read(ROWS_PER_READ);
    for (const entry of entries) if (entry.origin !== origin) consumer.apply(entry);
    if (entries.length < ROWS_PER_READ) return;
  }
}

export interface PgOutboxFeedOptions extends FeedOptions {
  connectionString: string;
  /** how often the listening connection proves that it is alive and caught up */
  heartbeatMs?: number;
  /** how long after the last proof the consumer is still trusted; the cross-instance staleness bound */
  trustMs?: number;
}

const HEARTBEAT_MS = 200;
const TRUST_MS = 750;

/** The listening connection of the PostgreSQL feed, and the reads its notifications start. */
interface Listening {
  client: pg.Client;
  /** set once the connection listens */
  cursor: OutboxCursor | null;
  /** the reads woken so far, in order, after the start; rejects when one failed */
  reads: Promise<void>;
}

/**
 * LISTEN first, then the cursor at the outbox's end, then the consumer restarted: an event committed after the
 * LISTEN wakes a read from the cursor (the reads wait for the start); one committed before it is covered by the
 * restart.
 */
async function listen(opts: PgOutboxFeedOptions, trustMs: number): Promise<Listening> {
  const c = new (pgDriver().Client)({
    connectionString: opts.connectionString,
    application_name: 'ferry-link-cache',
    keepAlive: true,
    query_timeout: trustMs,
  });
  c.on('error', () => undefined); // a broken connection fails the next heartbeat, which replaces it
  let started!: () => void;
  let failed!: (err: unknown) => void;
  const start = new Promise<void>((resolve, reject) => {
    started = resolve;
    failed = reject;
  });
  const state: Listening = { client: c, cursor: null, reads: start };
  state.reads.catch(() => undefined);
  let woken = false;
  c.on('notification', (message) => {
    if (message.channel !== OUTBOX_CHANNEL || woken) return;
    woken = true; // one read for every notification heard before it starts
    state.reads = state.reads.then(() => {
      woken = false;
      return drain(state.cursor!, opts);
    });
    state.reads.catch(() => undefined); // a failed read fails the next heartbeat, which listens anew
  });
  try {
    await c.connect();
    await c.query(`listen ${OUTBOX_CHANNEL}`);
    state.cursor = await openOutboxCursor(opts.db, 'end');
    await opts.consumer.restart();
    started();
  } catch (err) {
    failed(err);
    void c.end().catch(() => undefined);
    throw err;
  }
  return state;
}

/**
 * The outbox's feed on PostgreSQL (SPEC §13: another instance follows a change within 1 s). The outbox rows are
 * the truth; LISTEN/NOTIFY is the wake-up, because of two properties a side channel lacks:
 *
 * - A NOTIFY sent inside the transaction of a change (db/outbox.ts recordEvents) is delivered if and only if that
 *   transaction commits, to every session listening at that moment. No instance killed between commit and
 *   publish, no publish that fails after the commit.
 * - The one way to miss a notification is not to be listening: the connection broke. So every HEARTBEAT_MS the
 *   listening connection runs `select 1`; PostgreSQL sends pending notifications before it reads the next
 *   command, so an answer (and the end of the reads the notifications before it woke) proves that every change
 *   committed before the query was sent has been applied. The consumer serves from what it holds only while
 *   the last proof is younger than TRUST_MS (its gate); a new connection restarts it before it is trusted again.
 *
 * So a visit on another instance sees a change at most TRUST_MS after its commit (in practice a few
 * milliseconds: the notification and one read), whatever fails. test/scaleout/link-cache-invalidation.test.ts
 * kills the listening connection in the middle of a change.
 */
export async function createPgOutboxFeed(opts: PgOutboxFeedOptions) {
  const { consumer, log } = opts;
  const heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
  const trustMs = opts.trustMs ?? TRUST_MS;
  let listening: Listening | null = null;
  let provenAt = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  let failing = false;

  consumer.gate?.(() => performance.now() - provenAt < trustMs);

  async function heartbeat(): Promise<void> {
    try {
      listening ??= await listen(opts, trustMs);
      const sentAt = performance.now();
      await listening.client.query('select 1');
      await listening.reads;
      provenAt = sentAt;
      if (failing) log.info('outbox feed: listening again; the redirect cache is used again');
      failing = false;
    } catch (err) {
      if (!failing) log.warn({ err }, 'outbox feed interrupted: redirects read the database until it is back');
      failing = true;
      const broken = listening;
      listening = null;
      void broken?.client.end().catch(() => undefined);
    }
  }

  let beating: Promise<void> = Promise.resolve();
  const loop = (): Promise<void> => {
    beating = heartbeat().then(() => {
      if (!closed) timer = setTimeout(() => void loop(), heartbeatMs);
    });
    return beating;
  };
  await loop();

  return {
    /** whether the consumer may serve from what it holds now (tests) */
    trusted: (): boolean => performance.now() - provenAt < trustMs,
    async close(): Promise<void> {
      closed = true;
      if (timer) clearTimeout(timer);
      await beating;
      await listening?.reads.catch(() => undefined);
      await listening?.client.end().catch(() => undefined);
      listening = null;
    },
  };
}

export interface SqliteOutboxFeedOptions extends FeedOptions {
  /** how often the outbox is read: the bound on how long another process's change goes unseen */
  intervalMs?: number;
}

const INTERVAL_MS = 250;

/**
 * The outbox's feed on the embedded engine: the server makes most changes itself (and applies them to its
 * caches then), but the `ferry` CLI writes beside it (an import, a link disabled). Every INTERVAL_MS the rows
 * past the last one read are read (an index search; nothing when there is nothing new) and the other
 * processes' applied. A read through Kysely waits for a transaction of the server's own to end, so it never
 * sees uncommitted rows. Nothing to restart: the consumer starts empty, with the cursor at the end.
 */
export async function startSqliteOutboxFeed(opts: SqliteOutboxFeedOptions): Promise<{ close(): Promise<void> }> {
  // One writer at a time: an id is committed before any later one is handed out.
  const cursor = await openOutboxCursor(opts.db, 'end', { lateCommits: false });
  let failing = false;
  let closed = false;
  let reading: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  const read = async () => {
    try {
      await drain(cursor, opts);
      failing = false;
    } catch (err) {
      const message = 'the outbox could not be read: the redirect cache may miss changes of other processes';
      if (!failing) opts.log.warn({ err }, message);
      failing = true;
    }
  };
  // The next read is timed from the end of this one: a read that waits (a transaction holds the connection)
  // piles nothing up.
  const later = (): void => {
    if (closed) return;
    timer = setTimeout(() => {
      reading = read().then(later);
    }, opts.intervalMs ?? INTERVAL_MS);
    timer.unref();
  };
  later();
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await reading;
    },
  };
}
