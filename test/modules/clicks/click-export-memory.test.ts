import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Paginator } from '../../../src/lib/pagination.js';
import { createClickRecordsRepository } from '../../../src/modules/clicks/records/click-records.repository.js';
import { createClickRecordsService, EXPORT_CHUNK } from '../../../src/modules/clicks/records/click-records.service.js';
import { createTestApp, engines, freshPostgresDatabase, type TestApp } from '../../helpers/app.js';
import { createUser, type CreatedUser } from '../../helpers/factories.js';
import { startServer } from '../../helpers/server-process.js';
import { createLink, type CreatedLink } from '../links/links.helpers.js';
import { missing, unless } from '../../helpers/skip.js';

const CLICKS = 100_000;
const JWT_SECRET = 'test-secret-that-is-at-least-32-bytes-long!';

/** Peak and current resident set size of a process (Linux /proc), in bytes. */
function memoryOf(pid: number): { peak: number; now: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]) * 1024;
  return { peak: kb('VmHWM'), now: kb('VmRSS') };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

/** SPEC §13: the CSV export of a link's click records streams in bounded memory, whatever their number. */
describe.each(engines)('CSV export of 100,000 clicks on %s', (engine) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ferry-export-'));
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>> | null = null;
  let t: TestApp;
  let owner: CreatedUser;
  let link: CreatedLink;
  const start = Date.now() - CLICKS * 1000;
  beforeAll(async () => {
    database = engine === 'postgres' ? await freshPostgresDatabase() : null;
    t = await createTestApp(engine, { dataDir, ...(database ? { databaseUrl: database.url } : {}), redisUrl: '' });
    owner = await createUser(t);
    link = await createLink(t, {}, owner.token);
    await t.storage.db.transaction().execute(async (tx) => {
      for (let i = 0; i < CLICKS; i += 1000) {
        await tx
          .insertInto('clicks')
          .values(
            Array.from({ length: 1000 }, (_, j) => ({
              link_id: link.id,
              short_code: link.short_code,
              clicked_at: start + (i + j) * 1000,
              ip: `10.0.${((i + j) >> 8) & 255}.${(i + j) & 255}`,
              user_agent: `Mozilla/5.0 (export test ${i + j}; like Gecko)`,
              referrer: `https://referrer.example/page/${i + j}?utm_source=test`,
              click_key: null,
            })),
          )
          .execute();
      }
    });
  }, 120_000);
  afterAll(async () => {
    await t.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('when the reader pauses, then the export stops reading the database: at most a couple of chunks are held, and all 100,000 rows come once it reads on', async () => {
    const paginator = new Paginator(createHash('sha256').update('x').digest());
    const repository = createClickRecordsRepository(t.storage.db, paginator);
    let pagesRead = 0;
    const counting = {
      page: (...args: Parameters<typeof repository.page>) => ((pagesRead += 1), repository.page(...args)),
    };
    const service = createClickRecordsService({
      records: counting,
      links: { getForOwner: async () => ({ id: link.id }) as never },
      paginator,
    });
    const csv: Readable = await service.csv(link.short_code, {}, null, [
      'id',
      'clicked_at',
      'ip',
      'user_agent',
      'referrer',
    ]);
    const first = await new Promise<Buffer>((resolve) =>
      csv.once('data', (chunk: Buffer) => {
        csv.pause();
        resolve(chunk);
      }),
    );
    expect(first.toString('utf8').startsWith('id,clicked_at,ip,user_agent,referrer\r\n')).toBe(true);
    await settle();
    expect(pagesRead).toBeLessThanOrEqual(3);
    let lines = first.toString('utf8').split('\n').length - 1;
    csv.resume();
    for await (const chunk of csv) lines += (chunk as Buffer).toString('utf8').split('\n').length - 1;
    expect(lines).toBe(CLICKS + 1);
    expect(pagesRead).toBe(CLICKS / EXPORT_CHUNK);
  });

  it.runIf(missing.linux === null)(
    unless(
      missing.linux,
      'when a real server exports them all, then every row arrives; its resident memory is measured',
    ),
    async () => {
      await t.close();
      // The young generation pinned to Node 20's size (16 MB semi-spaces): Node 24 sizes it larger by default,
      // and the same streaming export then grew RSS by +49 to +56 MB against +23 MB pinned (measured on 24.21.0),
      // so without the pin this figure would measure the Node version, not the export. The collector on the main
      // thread only: with V8's background marking, a machine busy with other work (a full CI run) let the heap
      // grow while marking waited for a core (+76 to +78 MB seen for the same streaming export).
      const server = await startServer(
        {
          NODE_OPTIONS: '--max-semi-space-size=16',
          DATA_DIR: dataDir,
          JWT_SECRET,
          OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
          ...(database ? { DATABASE_URL: database.url } : {}),
        },
        ['--single-threaded-gc'],
      );
      try {
        const pid = server.child.pid!;
        const get = (accept: string, query = '') =>
          fetch(`${server.baseUrl}/api/v1/links/${link.short_code}/clicks${query}`, {
            headers: { accept, authorization: `Bearer ${owner.token}` },
          });
        // Warm: every route's schemas compiled (they compile after listening), and the route, its queries and the
        // CSV code have run before the measurement (on two chunks' worth).
        // The log line, however long a loaded machine takes to compile (a 30 s poll ran out in a full CI run).
        await server.waitFor(
          (l) => (l.msg === 'schema compilers warmed' ? true : undefined),
          'schema compilers warmed',
        );
        expect((await get('application/json')).status).toBe(200);
        await (
          await get('text/csv', `?from=${new Date(start + (CLICKS - 2 * EXPORT_CHUNK) * 1000).toISOString()}`)
        ).arrayBuffer();
        const before = memoryOf(pid);
        const started = performance.now();
        const res = await get('text/csv');
        expect(res.status).toBe(200);
        let lines = 0;
        let bytes = 0;
        let firstByteAt = 0;
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          firstByteAt ||= performance.now() - started;
          bytes += chunk.length;
          for (const byte of chunk) if (byte === 10) lines += 1;
        }
        const took = performance.now() - started;
        const after = memoryOf(pid);
        const mb = (n: number) => (n / 1048576).toFixed(1);
        process.stdout.write(
          `[${engine}] CSV export of ${CLICKS} clicks: ${mb(bytes)} MB in ${took.toFixed(0)} ms (first byte after ${firstByteAt.toFixed(0)} ms); server peak RSS ${mb(before.peak)} → ${mb(after.peak)} MB (+${mb(after.peak - before.peak)})\n`,
        );
        expect(lines).toBe(CLICKS + 1);
        expect(bytes).toBeGreaterThan(10 * 1048576);
        // A stream answers before the export is made; a buffered export only once it all is.
        expect(firstByteAt).toBeLessThan(took / 4);
        // Measured on the 2-core VM: +20 to +32 MB streaming (V8 sizing its young generation for the garbage of
        // 100 chunks), +49 to +68 MB for a variant that built the whole CSV first. RSS is the coarse witness;
        // the pause test above is the exact one.
        // In full CI runs the server sometimes grew far more for the same streaming export, on both engines: +76,
        // +94.9 and +99.5 MB on SQLite (Node 20 and 22), +63.9 MB on PostgreSQL (Node 20), against +0 to +31 MB in
        // the other runs and alone or beside CPU burners. The cause is not found (not the collector:
        // --single-threaded-gc did not remove it), so the bound here only catches a gross growth; that the export
        // streams is witnessed by the first byte above and by the pause test's exact count. One full CI run on
        // Node 24 (2026-12-02, with SPEC §22-§24's modules loaded) saw +193 MB; the same file alone on Node 24 then
        // passed. Still unexplained: the bound catches a gross growth only.
        expect(after.peak - before.peak).toBeLessThan(256 * 1048576);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    },
    180_000,
  );
});
