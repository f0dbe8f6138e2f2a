import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freshPostgresDatabase, type Engine } from './app.js';

/**
 * Storage for real server processes of one test: a temp DATA_DIR (and, on PostgreSQL, a fresh database) that
 * outlives restarts, as environment variables on top of `env`; `cleanup` removes both.
 */
export async function processStorage(
  engine: Engine,
  env: Record<string, string>,
): Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ferry-process-'));
  const all: Record<string, string> = { ...env, DATA_DIR: dataDir };
  let drop = async (): Promise<void> => undefined;
  if (engine === 'postgres') {
    const db = await freshPostgresDatabase();
    all.DATABASE_URL = db.url;
    drop = db.drop;
  }
  return {
    env: all,
    cleanup: async () => {
      await drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
