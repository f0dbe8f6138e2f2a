import { readdirSync } from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/** Every worker thread's module of src/: infra/module-thread.ts starts them by their `-thread` name. */
function threadModules(dir = 'src'): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return threadModules(rel);
    return e.name.endsWith('-thread.ts') && rel !== 'src/infra/module-thread.ts' ? [rel] : [];
  });
}

/** The packages a module loads, through its own imports and every file of ours it imports (type-only aside). */
function packagesLoadedBy(entry: string): string[] {
  const { metafile } = buildSync({
    entryPoints: [path.join(root, entry)],
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const packages = Object.values(metafile.inputs).flatMap((input) =>
    input.imports.filter((i) => i.external && !i.path.startsWith('node:')).map((i) => i.path),
  );
  return [
    ...new Set(
      packages.map((p) =>
        p
          .split('/')
          .slice(0, p.startsWith('@') ? 2 : 1)
          .join('/'),
      ),
    ),
  ].sort();
}

/**
 * Each SQLite app starts its threads (the click writer, which runs the WAL checkpoints too), each a Node context of its
 * own that loads its modules afresh: Kysely (about 280 files) once made most of the click writer thread's start
 * (its start took 600 ms of CPU with it, 270 without), loaded only for the event ids that db/events.ts made beside its queries. The
 * threads write with better-sqlite3's own statements (loaded by sqlite-driver.ts through createRequire).
 */
describe("the worker threads' imports", () => {
  const expected: Record<string, string[]> = {
    'src/modules/clicks/rollups/sqlite-click-thread.ts': ['isbot', 'ua-parser-js'],
    'src/modules/clicks/rollups/sqlite-import-thread.ts': ['isbot', 'ua-parser-js'],
    'src/db/sqlite-checkpoint-thread.ts': [],
    'src/db/sqlite-scan-thread.ts': [],
  };

  it('when the threads are listed, then each one is named here', () => {
    expect(threadModules().sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(Object.entries(expected))(
    'when %s starts, then it loads only the packages its work needs (no Kysely, no Fastify)',
    (entry, packages) => {
      expect(packagesLoadedBy(entry)).toEqual(packages);
    },
  );
});
