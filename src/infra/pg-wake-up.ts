import type { FastifyBaseLogger } from 'fastify';
import type pg from 'pg';
import { pgDriver } from '../db/pg-driver.js';

/**
 * A wake-up from PostgreSQL: LISTEN on a channel whose NOTIFY every writer sends in its transaction (db/events.ts:
 * `ferry_events`), so `onNotify` runs once the transaction committed, on every instance (this one included). It
 * only wakes readers that also poll: a wake-up missed while the connection was down costs the poll's delay, not an
 * event. A connection that fails is made anew after RETRY_MS.
 */
const RETRY_MS = 2_000;

export interface PgWakeUpOptions {
  connectionString: string;
  channel: string;
  /** runs for each notification (several at once are not coalesced here: the readers coalesce their reads) */
  onNotify: () => void;
  log: FastifyBaseLogger;
  /** the connection's name in pg_stat_activity */
  applicationName: string;
}

export function startPgWakeUp(opts: PgWakeUpOptions): { close(): Promise<void> } {
  let client: pg.Client | null = null;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  let failing = false;

  const retry = (): void => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, RETRY_MS);
    timer.unref();
  };

  async function connect(): Promise<void> {
    const c = new (pgDriver().Client)({
      connectionString: opts.connectionString,
      application_name: opts.applicationName,
      keepAlive: true,
    });
    const broken = (err?: unknown): void => {
      if (client === c) client = null;
      if (!failing && !closed)
        opts.log.warn({ err }, `${opts.channel}: listening stopped; readers poll until it is back`);
      failing = true;
      void c.end().catch(() => undefined);
      retry();
    };
    c.on('error', broken);
    c.on('end', () => broken());
    c.on('notification', (m) => {
      if (m.channel === opts.channel) opts.onNotify();
    });
    try {
      await c.connect();
      await c.query(`listen ${opts.channel}`);
      if (closed) return void (await c.end().catch(() => undefined));
      client = c;
      if (failing) opts.log.info(`${opts.channel}: listening again`);
      failing = false;
    } catch (err) {
      broken(err);
    }
  }

  void connect();
  return {
    async close(): Promise<void> {
      closed = true;
      if (timer) clearTimeout(timer);
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
