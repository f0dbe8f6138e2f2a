/**
 * A link's tags and aliases as the links table stores them: one comma-separated text each. Shared by the API's
 * input rules (link-input.ts) and the importers' (imported-link-rules.ts).
 */

/** Lower case, duplicates merged, in the order given; stored comma-separated (tags are a-z 0-9 -). */
export const tagsText = (tags: readonly string[] | null | undefined): string =>
  [...new Set((tags ?? []).map((t) => t.toLowerCase()))].join(',');

/** Duplicates merged, in the order given (case-sensitive); stored comma-separated (aliases are 0-9a-zA-Z_-). */
export const aliasesText = (aliases: readonly string[] | null | undefined): string =>
  [...new Set(aliases ?? [])].join(',');
