import type { Connection, RowDataPacket } from 'mysql2';
import type { SourceMarks } from './source-http.js';
import {
  parseSourceDate,
  readItem,
  SourceFormatError,
  visitDate,
  type ImportItem,
  type ImportVisit,
  type SourceEntry,
} from '../import-item.js';

/**
 * YOURLS, read from its own MySQL/MariaDB tables (its CREATE TABLE definitions: includes/functions-install.php in
 * YOURLS/YOURLS): `<prefix>url` (keyword, url, title, timestamp, ip, clicks) and `<prefix>log` (click_id,
 * click_time, shorturl, referrer — 'direct' when there was none —, user_agent, ip_address, country_code — '' when
 * unknown). YOURLS's API cannot list links, hence the database.
 *
 * Two streamed queries, both in key order — links by keyword (the primary key) and the log by shorturl (its
 * index) — are merged like a sorted join, so memory stays flat whatever the size of either table.
 */
export interface YourlsOptions {
  /** mysql://user:password@host:port/database (a socket: ?socketPath=/run/mysqld/mysqld.sock) */
  database: string;
  tablePrefix?: string;
  /** the log's marks: after the last whole run's (given), and through what this run reads (set once it starts) */
  marks?: SourceMarks;
}

interface UrlRow extends RowDataPacket {
  keyword: string;
  url: string;
  title: string | null;
  timestamp: string;
  clicks: number;
}
interface LogRow extends RowDataPacket {
  click_id: string | number;
  click_time: string;
  shorturl: string;
  referrer: string;
  user_agent: string;
  ip_address: string;
  country_code: string;
}

/** The SELECT of LogRow's columns from the log table; the caller adds its WHERE and ORDER BY. */
const logRowsOf = (prefix: string): string =>
  `SELECT click_id, click_time, shorturl, referrer, user_agent, ip_address, country_code FROM \`${prefix}log\``;

export async function* readYourls(options: YourlsOptions): AsyncGenerator<SourceEntry> {
  const prefix = options.tablePrefix ?? 'yourls_';
  if (!/^[A-Za-z0-9_]*$/.test(prefix))
    throw new SourceFormatError('the table prefix may hold only letters, digits and _');
  const links = await connect(options.database);
  const log = await connect(options.database);
  // A later run reads only the log rows after the last whole run's; a keyword new since then gets its older
  // rows by a query of its own, on a connection of its own (the other two are busy streaming).
  const after = options.marks?.after == null ? null : Number(options.marks.after);
  const history = after === null ? null : await connect(options.database);
  try {
    for (const table of [`${prefix}url`, `${prefix}log`])
      await links.promise().query(`SELECT 1 FROM \`${table}\` LIMIT 0`);
    // The log as it is now: rows logged while the import runs come with the next one.
    const [tops] = await links
      .promise()
      .query<Array<RowDataPacket & { top: string | number }>>(
        `SELECT COALESCE(MAX(click_id), 0) AS top FROM \`${prefix}log\``,
      );
    const top = Number(tops[0]?.top ?? 0);
    if (options.marks) options.marks.through = String(top);
    const urlRows = links
      .query(`SELECT keyword, url, title, timestamp, clicks FROM \`${prefix}url\` ORDER BY keyword`)
      .stream({ highWaterMark: 500 });
    const logStream = log
      .query(`${logRowsOf(prefix)} WHERE click_id > ? AND click_id <= ? ORDER BY shorturl, click_id`, [after ?? 0, top])
      .stream({ highWaterMark: 2000 });
    // Until the first link asks for visits nobody iterates this stream; its error then surfaces on that read.
    logStream.on('error', () => undefined);
    const logRows = new Peekable<LogRow>(logStream[Symbol.asyncIterator]());
    for await (const row of urlRows as AsyncIterable<UrlRow>) {
      while ((await logRows.peek()) !== undefined && compareBinary(logRows.current!.shorturl, row.keyword) < 0)
        await logRows.next();
      const visits = (since: string | null) => {
        const later = visitsOf(row.keyword, logRows, since);
        return since === null && history !== null && after !== null
          ? concat(olderVisits(history, prefix, row.keyword, after), later)
          : later;
      };
      yield readItem(`/${row.keyword}`, () => yourlsItem(row, visits));
    }
  } finally {
    links.destroy();
    log.destroy();
    history?.destroy();
  }
}

/** A keyword's log rows up to `through` (a keyword that was not imported by the last whole run). */
async function* olderVisits(
  history: Connection,
  prefix: string,
  keyword: string,
  through: number,
): AsyncGenerator<ImportVisit> {
  const rows = history
    .query(`${logRowsOf(prefix)} WHERE shorturl = ? AND click_id <= ? ORDER BY click_id`, [keyword, through])
    .stream({ highWaterMark: 2000 });
  for await (const v of rows as AsyncIterable<LogRow>) yield visitOf(v);
}

async function* concat<T>(...parts: AsyncIterable<T>[]): AsyncGenerator<T> {
  for (const part of parts) yield* part;
}

async function connect(uri: string): Promise<Connection> {
  let connection: Connection;
  try {
    // Loaded by the first YOURLS import, not by every start (mysql2 costs a process about 60 ms of CPU).
    const { default: mysql } = await import('mysql2');
    connection = mysql.createConnection({ uri, dateStrings: true, timezone: 'Z', supportBigNumbers: true });
    await connection.promise().query("SET time_zone = '+00:00'");
  } catch (error) {
    throw new SourceFormatError(`the YOURLS database could not be opened: ${(error as Error).message}`);
  }
  return connection;
}

function yourlsItem(row: UrlRow, visits: (since: string | null) => AsyncIterable<ImportVisit>): ImportItem {
  return {
    domain: null,
    code: row.keyword,
    target: row.url,
    createdAt: parseSourceDate(row.timestamp),
    expiresAt: null,
    tags: [],
    title: row.title === null || row.title === '' ? null : row.title,
    maxVisits: null,
    forwardQuery: false,
    aliases: [],
    visitCount: Number(row.clicks),
    visits,
    notImported: [],
  };
}

/**
 * The log rows of one keyword, in the order of click_id (a visit's mark), after `since`. The rows before it are
 * read past all the same: the log is one stream shared by every keyword.
 */
async function* visitsOf(keyword: string, log: Peekable<LogRow>, since: string | null): AsyncGenerator<ImportVisit> {
  const after = since === null ? -1 : Number(since);
  while ((await log.peek()) !== undefined && log.current!.shorturl === keyword) {
    const v = log.current!;
    await log.next();
    if (Number(v.click_id) > after) yield visitOf(v);
  }
}

const visitOf = (v: LogRow): ImportVisit => ({
  key: String(v.click_id),
  at: visitDate(v.click_time),
  referrer: v.referrer === '' || v.referrer === 'direct' ? null : v.referrer,
  userAgent: v.user_agent === '' ? null : v.user_agent,
  ip: v.ip_address === '' ? null : v.ip_address,
  country: /^[A-Za-z]{2}$/.test(v.country_code) ? v.country_code.toUpperCase() : null,
  isBot: null,
});

/** utf8mb4_bin order (by code point), which JavaScript's UTF-16 comparison differs from above U+FFFF. */
function compareBinary(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i += 1;
  }
  return a.length - b.length;
}

/** An async iterator that can look at its next value without taking it. */
class Peekable<T> {
  current: T | undefined;
  private loaded = false;
  constructor(private readonly it: AsyncIterator<T>) {}
  async peek(): Promise<T | undefined> {
    if (!this.loaded) {
      const r = await this.it.next();
      this.current = r.done ? undefined : r.value;
      this.loaded = true;
    }
    return this.current;
  }
  async next(): Promise<void> {
    await this.peek();
    this.loaded = false;
  }
}
