import { isJournalSegment } from '../../modules/clicks/index.js';

/**
 * What a backup file holds (`ferry backup FILE`): a gzip-compressed tar archive of, in this order,
 *   ferry-backup.json   the manifest (below)
 *   ferry.db            a consistent copy of the embedded database (SQLite's online backup)
 *   jwt-secret          DATA_DIR/jwt-secret, when the server generated its key there
 *   click-journal/…     the click journal's segments: clicks answered but perhaps not yet in the database
 *   SHA256SUMS          a SHA-256 of every file above, in `sha256sum` format (`sha256sum -c` checks them)
 * Restoring is putting the files back in DATA_DIR: the next start replays what the journal holds beyond the
 * database's marks, each click once.
 */
export const MANIFEST = 'ferry-backup.json';
export const DATABASE = 'ferry.db';
export const JWT_SECRET_FILE = 'jwt-secret';
export const JOURNAL_DIR = 'click-journal';
export const SUMS = 'SHA256SUMS';
export const FORMAT = 'ferry-backup';
export const FORMAT_VERSION = 1;

export interface Manifest {
  format: typeof FORMAT;
  version: number;
  created_at: string;
  ferry_version: string;
  database: { file: string; bytes: number; migrations: string[]; users: number; links: number; clicks: number };
  /**
   * Where the backed-up server's token key came from: `file` (DATA_DIR/jwt-secret, in the backup), or
   * `environment` (JWT_SECRET: not in the backup; the restored server needs the same value).
   */
  jwt_secret: 'file' | 'environment';
  click_journal: { segments: number; bytes: number };
}

/** Whether an archive entry is one a backup holds (restore writes nothing else, and nowhere else). */
export function isBackupEntry(name: string): boolean {
  if (name === MANIFEST || name === DATABASE || name === JWT_SECRET_FILE || name === SUMS) return true;
  const [dir, file, ...rest] = name.split('/');
  return dir === JOURNAL_DIR && file !== undefined && rest.length === 0 && isJournalSegment(file);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * What is wrong with a manifest of this format (version at most FORMAT_VERSION), or null: each field the restore
 * reads, so that a malformed one is named instead of failing later as a TypeError.
 */
export function manifestProblem(m: Record<string, unknown>): string | null {
  if (typeof m.ferry_version !== 'string') return 'ferry_version must be a string';
  if (typeof m.created_at !== 'string' || Number.isNaN(Date.parse(m.created_at))) return 'created_at must be a date';
  const db = m.database;
  if (!isRecord(db)) return 'database must be an object';
  if (db.file !== DATABASE) return `database.file must be ${DATABASE}`;
  const names = db.migrations;
  if (!Array.isArray(names) || !names.every((n) => typeof n === 'string'))
    return 'database.migrations must be a list of names';
  for (const key of ['bytes', 'users', 'links', 'clicks'])
    if (!isCount(db[key])) return `database.${key} must be a count`;
  if (m.jwt_secret !== 'file' && m.jwt_secret !== 'environment') return 'jwt_secret must be "file" or "environment"';
  const journal = m.click_journal;
  if (!isRecord(journal) || !isCount(journal.segments) || !isCount(journal.bytes)) {
    return 'click_journal must hold the counts segments and bytes';
  }
  return null;
}

/** Whether `v` is a manifest's outer shape: an object naming this format and an integer version. */
export const isManifestLike = (v: unknown): v is Record<string, unknown> & { format: string; version: number } =>
  isRecord(v) &&
  v.format === FORMAT &&
  typeof v.version === 'number' &&
  Number.isSafeInteger(v.version) &&
  v.version >= 1;
