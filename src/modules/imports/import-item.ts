import type { RuleInput } from '../links/index.js';
/**
 * What every source reader produces: one item per link of the source, in the source's own terms but already
 * in one shape, so that the import engine knows nothing of Shlink, Kutt or YOURLS. Readers only translate;
 * whether an item fits Ferry (URL rules, tag rules, code rules) is decided by the engine, which records the
 * decision per item.
 */
export interface ImportVisit {
  /**
   * The source's mark of this visit: visits come in the order of their marks, and a reader asked for the visits
   * after a mark (a re-run, a run cut off in the middle of a link's history) gives only the later ones.
   */
  key: string;
  /** epoch ms; NaN when the source's date could not be read (the visit is skipped and counted) */
  at: number;
  referrer: string | null;
  userAgent: string | null;
  ip: string | null;
  /** ISO 3166-1 alpha-2, upper case, or null */
  country: string | null;
  /** the source's own bot verdict, when it has one (Shlink's potentialBot); otherwise the engine decides */
  isBot: boolean | null;
}

/** Something of the source item that Ferry cannot carry over, said per item in the job's report. */
export interface NotImported {
  field: string;
  reason: string;
}

export interface ImportItem {
  /** the source's domain of the link; null for the source's default domain */
  domain: string | null;
  /** the code (keyword, back-half, address) as the source serves it */
  code: string;
  target: string;
  createdAt: number | null;
  expiresAt: number | null;
  tags: string[];
  title: string | null;
  maxVisits: number | null;
  forwardQuery: boolean;
  /** further codes of the same link on the same domain */
  aliases: string[];
  /** the source's own visit count (Kutt, Dub, YOURLS): the link's click_count when it exceeds the records imported */
  visitCount: number | null;
  /**
   * The source's visit records after the mark `since` (null: all of them), read lazily and in the order of their
   * marks; null when the source has none. A reader may share one cursor between items (YOURLS): consume an
   * item's visits before asking for the next item.
   */
  visits: ((since: string | null) => AsyncIterable<ImportVisit>) | null;
  notImported: NotImported[];
  /** the source's redirect rules as Ferry's (SPEC §21: Shlink's); none: the link has none */
  rules?: RuleInput[];
  /** where in the source, when a code does not say it: a CSV file's line ("line 3") */
  row?: string;
}

/** A source item the reader could not even read as a link (a CSV row without a URL, a broken date). */
export interface UnreadableItem {
  unreadable: true;
  /** where in the source: a row number, a code */
  at: string;
  reason: string;
}

export type SourceEntry = ImportItem | UnreadableItem;

export const isUnreadable = (e: SourceEntry): e is UnreadableItem => 'unreadable' in e;

const MYSQL_DATETIME = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]) ([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/;

/** Parses a source's date (ISO 8601 with or without zone, or a plain "YYYY-MM-DD HH:MM:SS" read as UTC). */
export function parseSourceDate(value: string | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  // YOURLS's log and MySQL's DATETIME, a million times in an import: read by position, not by Date.parse.
  if (value.length === 19 && MYSQL_DATETIME.test(value)) {
    const n = (from: number, to: number) => Number(value.slice(from, to));
    return Date.UTC(n(0, 4), n(5, 7) - 1, n(8, 10), n(11, 13), n(14, 16), n(17, 19));
  }
  const text = value.trim();
  if (text === '') return null;
  const isoish = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text) ? `${text.replace(' ', 'T')}Z` : text;
  const normalized = isoish.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = Date.parse(normalized);
  if (Number.isNaN(ms)) throw new SourceFormatError(`not a date: ${JSON.stringify(value)}`);
  return ms;
}

/** A visit's date, or NaN when it cannot be read (one bad visit is skipped, never the whole import: SPEC §25). */
export function visitDate(value: string | null | undefined): number {
  try {
    return parseSourceDate(value) ?? Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/**
 * Reads one source record as an item; a record that cannot be read (a broken date, a missing field) becomes an
 * unreadable item naming it, so one bad record fails itself and never the import (SPEC §25).
 */
export function readItem(at: string, read: () => ImportItem): SourceEntry {
  try {
    return read();
  } catch (error) {
    return { unreadable: true, at, reason: (error as Error).message };
  }
}

/** A source answered something that is not its documented format. */
export class SourceFormatError extends Error {}

/** A source could not be reached or refused us (wrong key, unknown group). */
export class SourceAccessError extends Error {}
