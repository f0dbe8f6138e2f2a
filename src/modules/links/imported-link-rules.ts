import { EARLIEST_INSTANT, INSTANT_RULE, LATEST_INSTANT } from '../../lib/instant.js';
import { ALIAS_PATTERN, CODE_PATTERN } from '../../lib/link-code.js';
import type { ErrorDetail } from '../../lib/app-error.js';
import { tagsText } from './link-lists.js';
import {
  checkRules,
  MAX_CONDITIONS,
  MAX_RULES,
  MAX_VALUES,
  rulesText,
  type RuleInput,
  type UrlChecker,
} from './rules/index.js';
import { MAX_ALIASES, MAX_TAGS, MAX_TITLE_LENGTH } from './links.schemas.js';
import { isReservedCode } from './short-code.js';

/**
 * A link another service had, as an importer asks for it (SPEC §20, §25): Ferry's domain already mapped, its
 * own code where it fits `short_code` (null: a generated one), the rest as the source had it.
 */
export interface ImportedLink {
  /** Ferry's host name, or null for the default domain */
  domain: string | null;
  shortCode: string | null;
  aliases: readonly string[];
  originalUrl: string;
  createdAt: number | null;
  expiresAt: number | null;
  maxVisits: number | null;
  forwardQuery: boolean;
  tags: readonly string[];
  title: string | null;
  /** the source's redirect rules as Ferry's (SPEC §21); none: the link has none */
  rules?: readonly RuleInput[];
}

/** The error codes an imported item fails with: the ones the API answers for the same field (SPEC §25). */
export type ImportErrorCode = 'VALIDATION_ERROR' | 'DESTINATION_BLOCKED' | 'DOMAIN_NOT_OWNED' | 'CONFLICT';

export interface ImportFailure {
  code: ImportErrorCode;
  field: string;
  message: string;
}

/** Something the link could not keep as the source had it, said on the item. */
export interface ImportNote {
  field: string;
  reason: string;
}

/** A link that passed the rules: the values stored, and what was changed on the way. */
export interface CheckedLink {
  domain: string | null;
  shortCode: string | null;
  aliases: string[];
  originalUrl: string;
  createdAt: number | null;
  expiresAt: number | null;
  maxVisits: number | null;
  forwardQuery: boolean;
  /** stored form: lower case, comma-separated */
  tags: string;
  title: string | null;
  /** stored form (links.rules): null for none */
  rules: string | null;
  notes: ImportNote[];
}

export type ImportedLinkCheck = { ok: true; link: CheckedLink } | { ok: false; failure: ImportFailure };

/** What the API's target rules say of a URL: the stored form, or the failure (links.service builds it). */
export type TargetCheck = (url: string) => { ok: true; url: string } | { ok: false; failure: ImportFailure };

const FITS_CODE = new RegExp(CODE_PATTERN);
const FITS_ALIAS = new RegExp(ALIAS_PATTERN);
const TAG = /^[a-z0-9-]{1,32}$/;
/** Control characters (C0, DEL and C1) as spaces: imported titles come from scraped pages, with line breaks and tabs. */
const withoutControls = (text: string): string => text.replace(/\p{Cc}/gu, ' ');

const inRange = (ms: number) => Number.isFinite(ms) && ms >= EARLIEST_INSTANT && ms <= LATEST_INSTANT;
const fail = (code: ImportErrorCode, field: string, message: string): ImportedLinkCheck => ({
  ok: false,
  failure: { code, field, message },
});

/** Aliases that fit (1-64 of 0-9a-zA-Z_-, not reserved, not the code), at most MAX_ALIASES; the rest named in notes. */
function aliasesOf(link: ImportedLink, notes: ImportNote[]): string[] {
  const wanted = [...new Set(link.aliases.filter((a) => a !== link.shortCode))];
  const kept = wanted.filter((a) => FITS_ALIAS.test(a) && !isReservedCode(a));
  if (kept.length !== wanted.length) {
    const dropped = wanted.filter((a) => !kept.includes(a)).map((a) => JSON.stringify(a.slice(0, 70)));
    notes.push({
      field: 'aliases',
      reason: `names that are not 1-64 of 0-9a-zA-Z_- (or are reserved) were dropped: ${dropped.join(', ')}`,
    });
  }
  if (kept.length > MAX_ALIASES)
    notes.push({ field: 'aliases', reason: `only the first ${MAX_ALIASES} aliases were kept` });
  return kept.slice(0, MAX_ALIASES);
}

/** Tags as the API stores them: lower case, 1-32 of a-z 0-9 -, at most MAX_TAGS; the rest dropped and named. */
function tagsOf(link: ImportedLink, notes: ImportNote[]): string {
  const tags = link.tags.map((t) =>
    t
      .trim()
      .toLowerCase()
      .replace(/[\s_]+/g, '-'),
  );
  const kept = [...new Set(tags.filter((t) => TAG.test(t)))];
  const refused = tags.filter((t) => !TAG.test(t));
  if (refused.length)
    notes.push({
      field: 'tags',
      reason: `tags that are not 1-32 of a-z 0-9 - were dropped: ${refused.map((t) => JSON.stringify(t.slice(0, 40))).join(', ')}`,
    });
  if (kept.length > MAX_TAGS) notes.push({ field: 'tags', reason: `only the first ${MAX_TAGS} tags were kept` });
  return tagsText(kept.slice(0, MAX_TAGS));
}

/** A title as the API allows it: control characters as spaces, trimmed, at most MAX_TITLE_LENGTH characters. */
function titleOf(link: ImportedLink, notes: ImportNote[]): string | null {
  const text = withoutControls(link.title ?? '').trim();
  if (text === '') return null;
  const chars = [...text];
  if (chars.length <= MAX_TITLE_LENGTH) return text;
  notes.push({ field: 'title', reason: `shortened to ${MAX_TITLE_LENGTH} characters` });
  return chars.slice(0, MAX_TITLE_LENGTH).join('');
}

/**
 * The source's rules that pass the API's rules for them (SPEC §21: conditions, limits, each URL checked as
 * original_url is), in the stored form; a rule that does not is left out and named, the others kept in order.
 */
function rulesOf(link: ImportedLink, checkTarget: TargetCheck, notes: ImportNote[]): string | null {
  const input = link.rules ?? [];
  if (input.length === 0) return null;
  const checkUrl: UrlChecker = (raw, field, details) => {
    const target = checkTarget(raw);
    if (target.ok) return target.url;
    details.push({ field, message: target.failure.message });
    return null;
  };
  const details: ErrorDetail[] = [];
  checkRules(input, [], checkUrl, details);
  const refused = new Map<number, string>();
  for (const d of details) {
    const at = Number(/^rules\.(\d+)/.exec(d.field)?.[1]);
    if (!refused.has(at)) refused.set(at, `${d.field} ${d.message}`);
  }
  input.forEach((r, i) => {
    if (
      !refused.has(i) &&
      (r.conditions.length > MAX_CONDITIONS || r.conditions.some((c) => (c.values ?? []).length > MAX_VALUES))
    )
      refused.set(i, `rules.${i} has more than ${MAX_CONDITIONS} conditions or ${MAX_VALUES} values in one`);
  });
  for (const reason of refused.values()) notes.push({ field: 'rules', reason: `a rule was left out: ${reason}` });
  const kept = input.filter((_, i) => !refused.has(i));
  if (kept.length > MAX_RULES) notes.push({ field: 'rules', reason: `only the first ${MAX_RULES} rules were kept` });
  return rulesText(checkRules(kept.slice(0, MAX_RULES), [], checkUrl, []).rules);
}

/**
 * SPEC §25: an imported link passes the rules the API applies to the same fields. What the API refuses, the
 * item fails with the API's error code and the field; what an importer can carry over in another form (a title
 * with line breaks, tags the tag rule refuses, too many aliases) is changed and said in `notes`. An expiry in
 * the past is kept (the API refuses one on creation): the source's expired link comes over expired, so its
 * code stays retired here too.
 */
export function checkImportedLink(link: ImportedLink, checkTarget: TargetCheck): ImportedLinkCheck {
  if (link.shortCode !== null && (!FITS_CODE.test(link.shortCode) || isReservedCode(link.shortCode))) {
    return fail(
      'VALIDATION_ERROR',
      'short_code',
      `${JSON.stringify(link.shortCode)} is not 1-8 of 0-9a-zA-Z, or is reserved`,
    );
  }
  for (const [field, at] of [
    ['created_at', link.createdAt],
    ['expires_at', link.expiresAt],
  ] as const) {
    if (at !== null && !inRange(at)) return fail('VALIDATION_ERROR', field, INSTANT_RULE);
  }
  const target = checkTarget(link.originalUrl);
  if (!target.ok) return { ok: false, failure: target.failure };
  const notes: ImportNote[] = [];
  const maxVisits =
    link.maxVisits !== null && Number.isSafeInteger(link.maxVisits) && link.maxVisits >= 1 ? link.maxVisits : null;
  if (link.maxVisits !== null && maxVisits === null)
    notes.push({ field: 'max_visits', reason: `${link.maxVisits} is not a visit limit; the link has none` });
  return {
    ok: true,
    link: {
      domain: link.domain,
      shortCode: link.shortCode,
      aliases: aliasesOf(link, notes),
      originalUrl: target.url,
      createdAt: link.createdAt,
      expiresAt: link.expiresAt,
      maxVisits,
      forwardQuery: link.forwardQuery,
      tags: tagsOf(link, notes),
      title: titleOf(link, notes),
      rules: rulesOf(link, checkTarget, notes),
      notes,
    },
  };
}
