import type { Worker } from 'node:worker_threads';
import type { CompiledQuery } from 'kysely';
import { closeModuleThread, startModuleThread } from '../infra/module-thread.js';
import type { ScanReply, ScanRequest, ScanThreadData } from './sqlite-scan-thread.js';

/**
 * Reads that must visit every row (a link search too short for the search index: SQLite cannot narrow a
 * one- or two-character substring, and a page-mode total counts every match) run here, on a worker thread
 * with its own read-only connection, instead of on the event loop: at a million links such a scan takes half a
 * second, during which the main connection would answer nothing and the overload guard would shed every other
 * request. The thread (sqlite-scan-thread.ts) starts with the first scan and leaves after IDLE_MS without one,
 * so an instance that never scans has none. Each scan sees the last commit before it began (WAL), as a read on
 * the main connection would.
 */
const IDLE_MS = 30_000;

export interface SqliteScans {
  all<R>(query: CompiledQuery<R>): Promise<R[]>;
  stop(): Promise<void>;
}

export function createSqliteScans(file: string): SqliteScans {
  let worker: Worker | null = null;
  let idle: NodeJS.Timeout | null = null;
  let next = 0;
  const pending = new Map<number, { resolve(rows: unknown[]): void; reject(err: Error): void }>();

  const failAll = (err: Error) => {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };

  function thread(): Worker {
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
    all<R>(query: CompiledQuery<R>): Promise<R[]> {
      if (idle) clearTimeout(idle);
      const id = (next += 1);
      const request: ScanRequest = { id, sql: query.sql, parameters: query.parameters };
      return new Promise<R[]>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (rows: unknown[]) => void, reject });
        thread().postMessage(request);
      });
    },
    stop,
  };
}
