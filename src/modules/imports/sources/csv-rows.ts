import { Readable } from 'node:stream';
import { parse } from 'csv-parse';

export type CsvInput = Readable | AsyncIterable<Buffer | string>;

export interface CsvRow {
  /** the row's line in the file (the header is line 1) */
  line: number;
  /** cells by header name, trimmed and in lower case (exports differ in case: `Long URL`, `long_url`) */
  cells: Record<string, string>;
}

/**
 * The rows of a CSV file with a header row, streamed: csv-parse reads RFC 4180 (quotes, embedded commas and
 * line breaks, a byte-order mark) a chunk at a time, so a file of any size is read in bounded memory.
 */
export async function* csvRows(input: CsvInput): AsyncGenerator<CsvRow> {
  const source = input instanceof Readable ? input : Readable.from(input);
  const parser = parse({
    bom: true,
    columns: (header: string[]) => header.map((name) => name.trim().toLowerCase()),
    skip_empty_lines: true,
    relax_column_count: true,
    info: true,
  });
  source.on('error', (error) => parser.destroy(error));
  source.pipe(parser);
  for await (const entry of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
    yield { line: entry.info.lines, cells: entry.record };
  }
}

/**
 * A cell by the first of its possible header names that the file has (exports name their columns in
 * several ways over the years); undefined when none is there. Header names are compared ignoring case.
 */
export function cell(row: CsvRow, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = row.cells[name.toLowerCase()];
    if (value !== undefined) return value;
  }
  return undefined;
}

/** A cell of several values ("a|b|c"), trimmed, empties dropped. */
export const splitCell = (value: string | undefined, separator: RegExp | string = '|'): string[] =>
  (value ?? '')
    .split(separator)
    .map((v) => v.trim())
    .filter((v) => v !== '');

/** A short link as exports write it ("https://bit.ly/abc", "bit.ly/abc", "dub.sh/summer"): its host and path. */
export function splitShortLink(link: string): { domain: string; code: string } | null {
  const text = link.trim();
  if (text === '') return null;
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`);
  } catch {
    return null;
  }
  const code = decodeURIComponent(url.pathname.replace(/^\/+/, '').replace(/\/+$/, ''));
  return code === '' ? null : { domain: url.host.toLowerCase(), code };
}
