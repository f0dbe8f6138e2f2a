/** Row helpers of the import's statements, shared by its tables' files. */

/**
 * A source's text as the job shows it: control characters as U+FFFD. An item's reference and reason quote the
 * source (its code, a cell), which may hold anything — a NUL, which PostgreSQL's text refuses.
 */
export const printable = (text: string): string => text.replace(/\p{Cc}/gu, '\uFFFD');

/** Rows per multi-row statement: well below both engines' limits on bound parameters. */
const CHUNK = 400;
export const chunks = <T>(items: readonly T[], size = CHUNK): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};
