import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { CompiledQuery } from 'kysely';
import { closeModuleThread, startModuleThread } from '../infra/module-thread.js';
import type { ScanReply, ScanRequest, ScanThreadData } from './sqlite-scan-thread.js';

/**
 * Reads that must visit every row (a link search too short for the search index: SQLite cannot narrow a
 * one- or two-character substring, and a page-mode total counts every match) run here, on worker threads
 * each with its own read-only connection, instead of on the event loop: at a million links such a scan takes a
 * fifth of a second, during which the main connection would answer nothing and the overload guard would shed
 * every other request. A thread (sqlite-scan-thread.ts) starts when a scan finds the others busy and leaves after
 * IDLE_MS without one, so an instance that never scans has none, and one that scans one at a time has one.
 * `width` threads at most (the cores this process may use, up to MAX_THREADS): a scan cut into that many parts
 * (`all` of each at once) reads them side by side. Each scan sees the last commit before it began (WAL), as a
 * read on the main connection would.
 */
const IDLE_MS = 30_000;
const MAX_THREADS = 4;

export interface SqliteScans {
  /** The query's rows, read on a thread of the scans; the least busy, so queries made together run side by side. */
  all<R>(query: CompiledQuery<R>): Promise<R[]>;
  /** How many scans run at once (one a thread): the parts worth cutting a long one into. */
  readonly width: number;
  stop(): Promise<void>;
}

interface Pending {
  resolve(rows: unknown[]): void;
  reject(err: Error): void;
}

/** One thread of the scans, started on its first query and stopped after IDLE_MS without one. */
function scanThread(file: string) {
  let worker: Worker | null = null;
  let idle: NodeJS.Timeout | null = null;
  const pending = new Map<number, Pending>();

  const failAll = (err: Error) => {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };

  function started(): Worker {
    if (worker) return worker;
    const w = startModuleThread(import.meta.url, './sqlite-scan-thread', {
      workerData: { file } satisfies ScanThreadData,
    });
    w.unref();
    w.on('message', (m: ScanReply) => {
      if ('closed' in m) return;
      const p = pending.get(m.id);
      pending.delete(m.id);
      if ('error' in m) p?.reject(new Error(m.error));
      else p?.resolve(m.rows);
      if (pending.size === 0) idle = setTimeout(() => void stop(), IDLE_MS).unref();
    });
    w.on('error', (err) => failAll(err));
    w.on('exit', () => {
      if (worker === w) worker = null;
      failAll(new Error('the scan thread exited'));
    });
    worker = w;
    return w;
  }

  async function stop(): Promise<void> {
    const w = worker;
    worker = null;
    if (idle) clearTimeout(idle);
    if (w) await closeModuleThread(w);
  }

  return {
    get busy(): number {
      return pending.size;
    },
    get running(): boolean {
      return worker !== null;
    },
    send(request: ScanRequest, waiting: Pending): void {
      if (idle) clearTimeout(idle);
      pending.set(request.id, waiting);
      started().postMessage(request);
    },
    stop,
  };
}

export function createSqliteScans(file: string, width = Math.min(MAX_THREADS, availableParallelism())): SqliteScans {
  const threads = Array.from({ length: Math.max(1, width) }, () => scanThread(file));
  let next = 0;

  /** The thread with the fewest scans waiting; among those, one already running, then the first. */
  const leastBusy = () =>
    threads.reduce((best, t) =>
      t.busy < best.busy || (t.busy === best.busy && t.running && !best.running) ? t : best,
    );

  return {
    width: threads.length,
    all<R>(query: CompiledQuery<R>): Promise<R[]> {
      const request: ScanRequest = { id: (next += 1), sql: query.sql, parameters: query.parameters };
      return new Promise<R[]>((resolve, reject) => {
        leastBusy().send(request, { resolve: resolve as (rows: unknown[]) => void, reject });
      });
    },
    async stop(): Promise<void> {
      await Promise.all(threads.map((t) => t.stop()));
    },
  };
}
