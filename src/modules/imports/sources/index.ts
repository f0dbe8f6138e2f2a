import type { SourceEntry } from '../import-item.js';
import { BITLY_DEFAULT_DOMAIN, readBitlyApi, readBitlyCsv } from './bitly.js';
import type { CsvInput } from './csv-rows.js';
import { readDubCsv } from './dub.js';
import { readGenericCsv } from './generic-csv.js';
import { readKutt } from './kutt.js';
import { readShlink } from './shlink.js';
import { readYourls } from './yourls.js';
import { DEFAULT_SOURCE_LIMITS, type SourceLimits, type SourceMarks } from './source-http.js';

export { DEFAULT_SOURCE_LIMITS, type SourceLimits, type SourceMarks } from './source-http.js';

export const SOURCE_NAMES = ['shlink', 'kutt', 'yourls', 'bitly', 'dub', 'csv'] as const;
export type SourceName = (typeof SOURCE_NAMES)[number];

/** Where an import reads from: a source's API, its database, or a CSV file (a stream: a file or a request body). */
export interface SourceSpec {
  source: SourceName;
  url?: string | undefined;
  apiKey?: string | undefined;
  database?: string | undefined;
  tablePrefix?: string | undefined;
  csv?: CsvInput | undefined;
}

/**
 * The host names each source uses for its own default domain, besides null: a link there lands on Ferry's
 * default domain unless a domain map names it.
 */
export const SOURCE_DEFAULT_DOMAINS: Record<SourceName, readonly string[]> = {
  shlink: [],
  kutt: [],
  yourls: [],
  csv: [],
  bitly: [BITLY_DEFAULT_DOMAIN],
  dub: ['dub.sh'],
};

/** What is missing for this source to be read (empty when it can be). */
export function sourceProblems(spec: Omit<SourceSpec, 'csv'> & { csv?: unknown }): string[] {
  const needs = (what: string, present: unknown) => (present ? [] : [`${spec.source} needs ${what}`]);
  switch (spec.source) {
    case 'shlink':
    case 'kutt':
      return [...needs('a url', spec.url), ...needs('an api key', spec.apiKey)];
    case 'yourls':
      return needs('a database URL', spec.database);
    case 'bitly':
      return spec.csv
        ? []
        : [...needs('a CSV file, or a url and an api key', spec.url), ...needs('an api key', spec.apiKey)];
    case 'dub':
    case 'csv':
      return needs('a CSV file', spec.csv);
  }
}

/** The source's items, streamed. Call sourceProblems first. */
export function readSource(
  spec: SourceSpec,
  limits: SourceLimits = DEFAULT_SOURCE_LIMITS,
  marks?: SourceMarks,
): AsyncIterable<SourceEntry> {
  switch (spec.source) {
    case 'shlink':
      return readShlink({ url: spec.url!, apiKey: spec.apiKey!, limits });
    case 'kutt':
      return readKutt({ url: spec.url!, apiKey: spec.apiKey!, limits });
    case 'yourls':
      return readYourls({ database: spec.database!, tablePrefix: spec.tablePrefix, ...(marks ? { marks } : {}) });
    case 'bitly':
      return spec.csv ? readBitlyCsv(spec.csv) : readBitlyApi({ url: spec.url!, apiKey: spec.apiKey!, limits });
    case 'dub':
      return readDubCsv(spec.csv!);
    case 'csv':
      return readGenericCsv(spec.csv!);
  }
}
