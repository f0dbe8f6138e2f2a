import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { containsPattern } from './dialect.js';
import type { Database } from './types.js';

/**
 * PostgreSQL: `needle` in link_search_text's `column` (migration 059: the title, the code, the aliases and the URL,
 * each lowered in its collation, joined by chr(1)), ignoring case: what the list's ilikes answer, in one `like` (the
 * pattern lowered once, as `ilike` lowers it). Null for a needle that could match across two of them: one holding
 * chr(1) (between the columns) or a comma (between two aliases, which `q` never searches for one).
 */
export function searchTextContains(column: string, needle: string): RawBuilder<SqlBool> | null {
  if (needle.includes('\u0001') || needle.includes(',')) return null;
  return sql<SqlBool>`${sql.ref(column)} like lower(${containsPattern(needle)}::text) escape '\\'`;
}

/** Which links a total counts: an owner's or everyone's (null), those live at `liveAt` (null: all), on `domains`. */
export interface SearchTextScope {
  owner: number | null;
  liveAt: number | null;
  /** null: every domain */
  domains: readonly number[] | null;
}

/**
 * PostgreSQL: how many links of `scope` hold `needle` (searchTextContains), counted in link_search_text: one
 * `like` a link over about half the pages a scan of `links` reads (migration 059). For a search no index narrows;
 * null for a needle searchTextContains cannot test.
 */
export async function countSearchText(
  db: Kysely<Database>,
  needle: string,
  { owner, liveAt, domains }: SearchTextScope,
): Promise<number | null> {
  const contains = searchTextContains('s.text', needle);
  if (contains === null) return null;
  if (domains !== null && domains.length === 0) return 0;
  const { n } = await db
    .selectFrom('link_search_text as s')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(() => contains)
    .$if(owner !== null, (query) => query.where('s.owner_id', '=', owner!))
    .$if(liveAt !== null, (query) =>
      query.where((eb) => eb.or([eb('s.expires_at', 'is', null), eb('s.expires_at', '>', liveAt!)])),
    )
    .$if(domains !== null, (query) => query.where('s.domain_id', 'in', [...domains!]))
    .executeTakeFirstOrThrow();
  return Number(n);
}
