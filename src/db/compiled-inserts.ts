import { CompiledQuery, type Compilable, type Kysely } from 'kysely';

/** Any schema: the statement is built and compiled the same whatever the tables. */
type AnyKysely = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * A multi-row INSERT that Kysely builds and compiles once for each number of rows, then runs with the rows'
 * values as its parameters: the same SQL on both engines, without building it again for every chunk. Building
 * it is an object per value (frozen) and a compilation per statement; for the importer's links, codes and
 * bookkeeping rows (hundreds of rows of up to 14 columns a statement) that was a sixth of a CSV import's time.
 *
 * `build` is the statement as it would be written for `rows`; it is compiled with a distinct marker in every
 * value, and its parameters must be exactly those markers, row by row in `columns`' order (a statement that
 * adds parameters of its own, or reorders them, is refused the first time it is used, not run wrong). Every
 * row gives every column: a value left out is written as NULL, not as the column's default.
 */
export function compiledInsert<Row extends object, Result>(
  columns: ReadonlyArray<keyof Row & string>,
  build: (db: AnyKysely, rows: Row[]) => Compilable<Result>,
): (db: AnyKysely, rows: readonly Row[]) => Promise<Result[]> {
  // By engine (a Kysely instance's adapter, which its transactions share) and number of rows.
  const byEngine = new WeakMap<object, Map<number, string>>();
  const textFor = (db: AnyKysely, n: number): string => {
    let texts = byEngine.get(db.getExecutor().adapter);
    if (texts === undefined) byEngine.set(db.getExecutor().adapter, (texts = new Map()));
    let text = texts.get(n);
    if (text !== undefined) return text;
    const markers = Array.from({ length: n }, (_, i) => columns.map((c) => `\u0000${i}:${c}`));
    const rows = markers.map((m) => Object.fromEntries(columns.map((c, j) => [c, m[j]])) as Row);
    const compiled = build(db, rows).compile();
    const expected = markers.flat();
    if (compiled.parameters.length !== expected.length || compiled.parameters.some((p, k) => p !== expected[k])) {
      throw new Error(
        `compiledInsert: the statement's parameters are not its rows' values in column order (${compiled.sql.slice(0, 80)}…)`,
      );
    }
    texts.set(n, (text = compiled.sql));
    return text;
  };
  return async (db, rows) => {
    if (rows.length === 0) return [];
    const params: unknown[] = new Array(rows.length * columns.length);
    let k = 0;
    for (const row of rows) for (const c of columns) params[k++] = (row as Record<string, unknown>)[c] ?? null;
    return (await db.executeQuery<Result>(CompiledQuery.raw(textFor(db, rows.length), params))).rows;
  };
}
