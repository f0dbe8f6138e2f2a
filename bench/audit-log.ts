/**
 * The audit log's filtered pages over 1,000,000 entries (SPEC §23; target: under 50 ms a page on both engines):
 *
 *   node --import tsx bench/audit-log.ts                       # the embedded SQLite database
 *   DATABASE_URL=postgres://… node --import tsx bench/audit-log.ts   # PostgreSQL (an empty database)
 *
 * Fills ROWS entries (default 1,000,000) spread over a year, 1,000 actors and every action, then asks the audit
 * service (the route's own code, below HTTP) for the pages an admin asks: by actor, by action, by actor and
 * action, a since/until window, and the next page of each by cursor. Each page ROUNDS times: p50 and max.
 * Prints a table and one JSON line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { AUDIT_ACTIONS } from '../src/db/audit-log.js';
import { createStorage } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { deploymentPaginator } from '../src/lib/pagination.js';
import { createAuditModule } from '../src/modules/audit/index.js';

const ROWS = Number(process.env.ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.ROUNDS ?? 30);
const TARGET_MS = 50;
const YEAR = 365 * 86_400_000;
const BATCH = 1_000;

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ferry-bench-audit-'));
  const storage = createStorage({ databaseUrl: process.env.DATABASE_URL ?? null, dataDir: dir, dbPoolMax: 2 });
  try {
    await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
    const now = Date.now();
    const start = now - YEAR;
    const row = (i: number) => ({
      at: start + Math.floor((i / ROWS) * YEAR),
      actor_id: 1 + (i % 1000),
      actor: `user${i % 1000}`,
      action: AUDIT_ACTIONS[(i * 7) % AUDIT_ACTIONS.length]!,
      target_type: 'user',
      target_id: String(i % 5000),
      ip: '203.0.113.7',
      details: '{"method":"password"}',
    });
    const seeding = performance.now();
    for (let i = 0; i < ROWS; i += BATCH)
      await storage.db
        .insertInto('audit_log')
        .values(Array.from({ length: Math.min(BATCH, ROWS - i) }, (_, j) => row(i + j)))
        .execute();
    if (!storage.sqlite) await storage.db.executeQuery({ sql: 'analyze audit_log', parameters: [] } as never);
    const seededS = (performance.now() - seeding) / 1000;

    const { audit } = createAuditModule({
      db: storage.db,
      clock: { now: () => now },
      paginator: deploymentPaginator(new Uint8Array(32)),
      retentionDays: 365,
    });
    const mid = new Date(start + YEAR / 2).toISOString();
    const later = new Date(start + YEAR / 2 + 7 * 86_400_000).toISOString();
    const pages: Array<{ name: string; query: Record<string, unknown> }> = [
      { name: 'actor', query: { actor_id: 417 } },
      { name: 'action', query: { action: 'domain.verified' } },
      { name: 'actor + action', query: { actor_id: 417, action: 'auth.sign_in' } },
      { name: 'since/until (a week)', query: { since: mid, until: later } },
      { name: 'action in a week', query: { action: 'link.disabled', since: mid, until: later } },
      { name: 'everything', query: {} },
    ];
    const results: Array<{ page: string; p50: number; max: number; rows: number }> = [];
    for (const p of pages) {
      for (const next of [false, true]) {
        let cursor: string | undefined;
        if (next)
          cursor = (await audit.list({ ...p.query, limit: 50 } as never, '/')).pagination.nextCursor ?? undefined;
        const times: number[] = [];
        let rows = 0;
        for (let r = 0; r < ROUNDS; r++) {
          const t0 = performance.now();
          const page = await audit.list({ ...p.query, limit: 50, ...(cursor ? { cursor } : {}) } as never, '/');
          times.push(performance.now() - t0);
          rows = page.data.length;
        }
        times.sort((a, b) => a - b);
        results.push({
          page: `${p.name}${next ? ', next page' : ''}`,
          p50: +times[Math.floor(times.length / 2)]!.toFixed(2),
          max: +times[times.length - 1]!.toFixed(2),
          rows,
        });
      }
    }
    const engine = storage.sqlite ? 'sqlite' : 'postgres';
    console.log(`audit log, ${ROWS.toLocaleString('en')} entries on ${engine} (seeded in ${seededS.toFixed(0)} s)`);
    for (const r of results)
      console.log(
        `${r.page.padEnd(34)} p50 ${String(r.p50).padStart(7)} ms  max ${String(r.max).padStart(7)} ms  (${r.rows} rows)`,
      );
    const worst = Math.max(...results.map((r) => r.max));
    console.log(`worst ${worst} ms: ${worst < TARGET_MS ? 'under' : 'OVER'} the ${TARGET_MS} ms target`);
    console.log(JSON.stringify({ bench: 'audit-log', engine, rows: ROWS, results, worst }));
  } finally {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
