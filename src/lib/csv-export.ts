import { pipeline, Readable } from 'node:stream';
import { stringify, type Stringifier } from 'csv-stringify';
import type { ResolvedList } from './pagination.js';

export type CsvCell = string | number | boolean | null;

/** The first characters a spreadsheet reads as a formula (OWASP "CSV injection"), ASCII and full-width, as a character class's body. */
const FORMULA_START = '=+@\\-\t\r\uFF1D\uFF0B\uFF0D\uFF20';
const ESCAPED_FORMULA = new RegExp(`^'*[${FORMULA_START}]`);
const QUOTED_FORMULA = new RegExp(`^'+[${FORMULA_START}]`);

/**
 * How a cell that a spreadsheet would run as a formula is written:
 * - `neutralise`: prefixed with a quote, as OWASP advises (the click records: text that visitors chose);
 * - `reversible`: the same, and a cell that already starts with quotes before a formula character gets one
 *   quote more, so that `unescapeCsvFormula` gives back exactly what was written (the links export, which
 *   the generic CSV importer reads back unchanged: a title "-50% today" survives the round trip).
 */
export type FormulaPolicy = 'neutralise' | 'reversible';

/** The generic CSV importer's reading of a cell the links export escaped (see FormulaPolicy). */
export const unescapeCsvFormula = (value: string): string => (QUOTED_FORMULA.test(value) ? value.slice(1) : value);

const escapeReversibly = (value: string): string => (ESCAPED_FORMULA.test(value) ? `'${value}` : value);

/**
 * A CSV document (RFC 4180, CRLF, header row) written by csv-stringify from chunks of rows. The chunks are
 * pulled one at a time as the client takes the text (backpressure through the pipeline), so an export holds
 * one chunk in memory whatever its size; a failed read or a client gone ends the whole pipeline.
 */
export function csvStream(
  header: readonly string[],
  chunks: AsyncIterable<ReadonlyArray<readonly CsvCell[]>>,
  formulas: FormulaPolicy,
): Stringifier {
  const out = stringify({
    record_delimiter: 'windows',
    escape_formulas: formulas === 'neutralise',
    cast: {
      boolean: (value) => (value ? 'true' : 'false'),
      ...(formulas === 'reversible' ? { string: escapeReversibly } : {}),
    },
  });
  async function* records(): AsyncGenerator<readonly CsvCell[]> {
    yield header;
    for await (const chunk of chunks) yield* chunk;
  }
  return pipeline(Readable.from(records()), out, () => undefined);
}

/**
 * Every row of a keyset-paginated list, a chunk of `size` rows per query, each query made only when the
 * previous chunk was taken. `fetch` answers up to `list.limit + 1` rows (Paginator.apply does), the extra
 * one telling that more follow; `keyOf` gives the row's sort value for the next query's keyset.
 */
export async function* keysetChunks<Row extends { id: number }>(
  list: ResolvedList,
  size: number,
  fetch: (list: ResolvedList) => Promise<Row[]>,
  keyOf: (row: Row) => string | number,
): AsyncGenerator<Row[]> {
  let page: ResolvedList = { ...list, mode: 'cursor', limit: size, after: null };
  for (;;) {
    const rows = await fetch(page);
    const chunk = rows.slice(0, size);
    if (chunk.length) yield chunk;
    if (rows.length <= size) return;
    const last = chunk[chunk.length - 1]!;
    page = { ...page, after: { value: keyOf(last), id: Number(last.id) } };
  }
}
