import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ByteReader, readTarHeader, tarEnd, tarHeader, tarPadding } from '../../src/cli/backup/tar.js';
import { SqliteDatabase } from '../../src/db/sqlite-driver.js';
import { runFerry } from '../helpers/cli.js';

type Entries = Map<string, Buffer>;

/** The files of a backup archive, in order. */
async function readArchive(file: string): Promise<Entries> {
  const reader = new ByteReader(Readable.from([gunzipSync(readFileSync(file))]));
  const entries: Entries = new Map();
  for (let e = await readTarHeader(reader); e !== null; e = await readTarHeader(reader)) {
    entries.set(e.name, await reader.read(e.size));
    await reader.read((512 - (e.size % 512)) % 512);
  }
  return entries;
}

/** An archive of `entries` (SHA256SUMS left out) with a SHA256SUMS that matches each: checksums prove nothing more. */
function writeArchive(file: string, entries: Entries): void {
  const parts: Buffer[] = [];
  const sums: string[] = [];
  const add = (name: string, bytes: Buffer) =>
    parts.push(
      tarHeader({ name, size: bytes.length, mode: 0o600, mtimeMs: Date.now() }),
      bytes,
      tarPadding(bytes.length),
    );
  for (const [name, bytes] of entries) {
    if (name === 'SHA256SUMS') continue;
    add(name, bytes);
    sums.push(`${createHash('sha256').update(bytes).digest('hex')}  ${name}`);
  }
  add('SHA256SUMS', Buffer.from(`${sums.join('\n')}\n`));
  parts.push(tarEnd());
  writeFileSync(file, gzipSync(Buffer.concat(parts)));
}

/** SPEC §25: a restore checks the manifest and the database, not only the checksums, before it reports success. */
describe(
  'ferry restore refuses an archive whose checksums match but whose content is no Ferry backup',
  { timeout: 180_000 },
  () => {
    let dir: string;
    let good: Entries;
    let manifest: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'ferry-restore-checks-'));
      const dataDir = path.join(dir, 'source');
      expect((await runFerry(['users', 'list'], { DATA_DIR: dataDir })).status).toBe(0);
      const backup = await runFerry(['backup', path.join(dir, 'good.tar.gz')], { DATA_DIR: dataDir });
      expect(backup.status, backup.stderr).toBe(0);
      good = await readArchive(path.join(dir, 'good.tar.gz'));
      manifest = JSON.parse(good.get('ferry-backup.json')!.toString('utf8'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    let n = 0;
    /** Restores an archive of `entries` into a new DATA_DIR: the run, and whether a database landed there. */
    const restore = async (entries: Entries) => {
      n += 1;
      const file = path.join(dir, `case-${n}.tar.gz`);
      writeArchive(file, entries);
      const dataDir = path.join(dir, `restored-${n}`);
      const run = await runFerry(['restore', file], { DATA_DIR: dataDir });
      return { ...run, restored: existsSync(path.join(dataDir, 'ferry.db')) };
    };
    const replacing = (name: string, bytes: Buffer): Entries =>
      new Map([...good].map(([k, v]) => [k, k === name ? bytes : v]));
    const withDatabase = (bytes: Buffer): Entries => replacing('ferry.db', bytes);
    const withManifest = (text: string): Entries => replacing('ferry-backup.json', Buffer.from(text));
    /** The good database changed by `sql`, as a backup's file (one file, no WAL). */
    const changedDatabase = (sql: string): Buffer => {
      const file = path.join(dir, `db-${(n += 1)}.db`);
      writeFileSync(file, good.get('ferry.db')!);
      const db = new SqliteDatabase(file);
      db.exec(sql);
      db.close();
      return readFileSync(file);
    };

    it('when the archive is good, then it restores (the cases below differ from it in one file)', async () => {
      const run = await restore(good);
      expect(run.status, run.stderr).toBe(0);
      expect(run.restored).toBe(true);
    });

    it('when the database is garbage, not SQLite, then exit 1 says so and DATA_DIR gets no database', async () => {
      const run = await restore(withDatabase(Buffer.alloc(64 * 1024, 'not a database ')));
      expect([run.status, run.restored]).toEqual([1, false]);
      expect(run.stderr).toMatch(
        /^ferry: not a usable Ferry backup: ferry\.db is not a readable SQLite database \(file is not a database\)\n$/,
      );
    });

    it('when the database is SQLite but damaged, then exit 1 names the integrity check', async () => {
      const bytes = Buffer.from(good.get('ferry.db')!);
      const pageSize = bytes.readUInt16BE(16);
      bytes.fill(0x5a, 2 * pageSize + 8, 3 * pageSize); // a b-tree page's cells, its header kept
      const run = await restore(withDatabase(bytes));
      expect([run.status, run.restored]).toEqual([1, false]);
      expect(run.stderr).toMatch(
        /not a usable Ferry backup: ferry\.db (fails SQLite's integrity check|is not a readable SQLite database \(database disk image is malformed\))/,
      );
    });

    it("when the database holds no Ferry schema, or one of a Ferry this one does not know, or not the manifest's, then exit 1 says which", async () => {
      const cases: Array<[string, RegExp]> = [
        ['drop table kysely_migration', /ferry\.db holds no Ferry schema \(no migration table\)/],
        ['delete from kysely_migration', /ferry\.db holds no Ferry schema \(no migration has run\)/],
        [
          "insert into kysely_migration (name, timestamp) values ('999_from_the_future', '2030-01-01')",
          /made by a newer Ferry .*999_from_the_future/,
        ],
        [
          `delete from kysely_migration where name = '${manifest.database.migrations.at(-1)}'`,
          /ferry\.db's migrations are not the ones/,
        ],
      ];
      for (const [sql, message] of cases) {
        const run = await restore(withDatabase(changedDatabase(sql)));
        expect([run.status, run.restored], sql).toEqual([1, false]);
        expect(run.stderr, sql).toMatch(message);
      }
    });

    it('when the manifest is malformed, then exit 1 names what is wrong with it, never a TypeError', async () => {
      const { database, ...rest } = manifest;
      const cases: Array<[string, RegExp]> = [
        ['null', /ferry-backup\.json is not a Ferry backup manifest/],
        ['[1, 2]', /ferry-backup\.json is not a Ferry backup manifest/],
        ['{"format":"ferry-backup"}', /ferry-backup\.json is not a Ferry backup manifest/],
        [JSON.stringify(rest), /ferry-backup\.json is malformed: database must be an object/],
        [
          JSON.stringify({ ...manifest, database: { ...database, migrations: 'all of them' } }),
          /database\.migrations must be a list/,
        ],
        [JSON.stringify({ ...manifest, database: { ...database, users: -1 } }), /database\.users must be a count/],
        [JSON.stringify({ ...manifest, jwt_secret: 'somewhere' }), /jwt_secret must be "file" or "environment"/],
        [JSON.stringify({ ...manifest, click_journal: null }), /click_journal must hold the counts segments and bytes/],
        [
          JSON.stringify({ ...manifest, version: 2 }),
          /this backup is of format 2, made by Ferry .*; this Ferry reads format 1/,
        ],
      ];
      for (const [text, message] of cases) {
        const run = await restore(withManifest(text));
        expect([run.status, run.restored], text).toEqual([1, false]);
        expect(run.stderr, text).toMatch(message);
        expect(run.stderr, text).not.toMatch(/TypeError|Cannot read|undefined/);
      }
    });
  },
);
