/**
 * A link's rules checked beyond their schema (SPEC §21) and made ready to store: every offending field reported
 * at once (one `details` item each, named as the request names it: `rules.0.conditions.1.values.2`), ids
 * assigned by Ferry and kept when sent back, defaults filled in. Pure: the target URLs are checked by the
 * caller's `checkUrl`, the one original_url goes through.
 */
import type { ErrorDetail } from '../../../lib/app-error.js';
import { INSTANT_RULE, parseInstant } from '../../../lib/instant.js';
import { randomAlphanumeric } from '../../../lib/random-text.js';
import { parseIpRange } from './rule-ip.js';
import {
  BROWSERS,
  DEVICES,
  type Condition,
  type Rule,
  type RuleInput,
  type RuleTarget,
  type Variant,
} from './rule-model.js';

/** The stored URL, or null with a detail pushed for `field`. */
export type UrlChecker = (raw: string, field: string, details: ErrorDetail[]) => string | null;

/** A checked URL of a rule's target, for the blocked-host check that follows (422 DESTINATION_BLOCKED). */
export interface RuleDestination {
  field: string;
  url: string;
}

const ID_LENGTH = 8;
const LANGUAGE_TAG = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$/;
const COUNTRY = /^[A-Za-z]{2}$/;
const HOST = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,62}[a-z0-9_])?)*$/;
const DEVICE_SET = new Set<string>(DEVICES);
const BROWSER_SET = new Set<string>(BROWSERS);

/** The ids a list already has: a rule's and a variant's id sent back are kept only when Ferry gave them. */
function knownIds(current: readonly Rule[]): { rules: Set<string>; variants: Set<string> } {
  const rules = new Set<string>();
  const variants = new Set<string>();
  for (const r of current) {
    rules.add(r.id);
    if ('split' in r.target) for (const v of r.target.split) variants.add(v.id);
  }
  return { rules, variants };
}

/** A stored id (Ferry's, and not taken twice in this list) or a fresh one. */
function idFor(sent: string | undefined, known: Set<string>, used: Set<string>): string {
  let id = sent !== undefined && known.has(sent) && !used.has(sent) ? sent : randomAlphanumeric(ID_LENGTH);
  while (used.has(id)) id = randomAlphanumeric(ID_LENGTH);
  used.add(id);
  return id;
}

/** The condition's values normalised, a detail for each bad one. */
function checkValues(c: RuleInput['conditions'][number], field: string, details: ErrorDetail[]): string[] {
  const values = c.values ?? [];
  const bad = (i: number, message: string) => details.push({ field: `${field}.values.${i}`, message });
  const each = (test: (v: string) => string | null, message: string): string[] =>
    values.map((v, i) => {
      const out = test(v);
      if (out === null) bad(i, message);
      return out ?? v;
    });
  if (c.type !== 'query' && values.length === 0) {
    details.push({ field: `${field}.values`, message: 'must name at least one value' });
    return values;
  }
  switch (c.type) {
    case 'device':
      return each(
        (v) => (DEVICE_SET.has(v.toLowerCase()) ? v.toLowerCase() : null),
        `must be one of ${DEVICES.join(', ')}`,
      );
    case 'browser':
      return each(
        (v) => (BROWSER_SET.has(v.toLowerCase()) ? v.toLowerCase() : null),
        `must be one of ${BROWSERS.join(', ')}`,
      );
    case 'language':
      return each((v) => (LANGUAGE_TAG.test(v) ? v : null), 'must be a language tag like en or pt-BR');
    case 'country':
      return each(
        (v) => (COUNTRY.test(v) ? v.toUpperCase() : null),
        'must be an ISO 3166 alpha-2 country code like DE',
      );
    case 'ip':
      return each(
        (v) => (parseIpRange(v) ? v : null),
        'must be an IPv4 or IPv6 address or CIDR (203.0.113.0/24, 2001:db8::/32)',
      );
    case 'referrer_host':
      return each((v) => {
        const host = v.toLowerCase().replace(/\.$/, '');
        return HOST.test(host) ? host : null;
      }, 'must be a host name like example.com');
    case 'after':
    case 'before':
      if (values.length !== 1) {
        details.push({ field: `${field}.values`, message: 'must hold exactly one instant' });
        return values;
      }
      return each((v) => (parseInstant(v) === null ? null : new Date(parseInstant(v)!).toISOString()), INSTANT_RULE);
    case 'query':
      return values;
  }
}

function checkCondition(c: RuleInput['conditions'][number], field: string, details: ErrorDetail[]): Condition {
  const values = checkValues(c, field, details);
  if (c.type !== 'query') {
    if (c.key !== undefined) details.push({ field: `${field}.key`, message: 'is only for query conditions' });
    if (c.match !== undefined) details.push({ field: `${field}.match`, message: 'is only for query conditions' });
    return { type: c.type, values };
  }
  const match = c.match ?? 'equals';
  if (c.key === undefined) details.push({ field: `${field}.key`, message: 'is required for a query condition' });
  if (match === 'equals' && values.length === 0)
    details.push({ field: `${field}.values`, message: 'must name at least one value (match: equals)' });
  if (match !== 'equals' && values.length > 0)
    details.push({ field: `${field}.values`, message: `must be empty or omitted with match: ${match}` });
  return { type: 'query', key: c.key ?? '', match, values };
}

function checkTarget(
  t: RuleInput['target'],
  field: string,
  ctx: {
    checkUrl: UrlChecker;
    details: ErrorDetail[];
    destinations: RuleDestination[];
    variantIds: Set<string>;
    known: Set<string>;
  },
): RuleTarget {
  const { details } = ctx;
  const url = (raw: string, at: string): string => {
    const checked = ctx.checkUrl(raw, at, details);
    if (checked !== null) ctx.destinations.push({ field: at, url: checked });
    return checked ?? raw;
  };
  if ((t.url === undefined) === (t.split === undefined)) {
    details.push({ field, message: 'must have either url or split' });
    return { url: t.url ?? '' };
  }
  if (t.url !== undefined) {
    if (t.sticky !== undefined) details.push({ field: `${field}.sticky`, message: 'is only for a split' });
    return { url: url(t.url, `${field}.url`) };
  }
  const split: Variant[] = t.split!.map((v, i) => ({
    id: idFor(v.id, ctx.known, ctx.variantIds),
    url: url(v.url, `${field}.split.${i}.url`),
    weight: v.weight,
  }));
  const sum = split.reduce((s, v) => s + v.weight, 0);
  if (sum !== 100) details.push({ field: `${field}.split`, message: `weights must sum to 100 (they sum to ${sum})` });
  return { split, sticky: t.sticky ?? true };
}

/**
 * The rules to store, from a request's `rules` (at `prefix`) and the link's current ones (their ids are kept
 * when sent back). Details are pushed for every offending field; `destinations` lists every checked URL.
 */
export function checkRules(
  input: readonly RuleInput[],
  current: readonly Rule[],
  checkUrl: UrlChecker,
  details: ErrorDetail[],
  prefix = 'rules',
): { rules: Rule[]; destinations: RuleDestination[] } {
  const known = knownIds(current);
  const ruleIds = new Set<string>();
  const variantIds = new Set<string>();
  const destinations: RuleDestination[] = [];
  const rules = input.map((r, i): Rule => {
    const field = `${prefix}.${i}`;
    const id = idFor(r.id, known.rules, ruleIds);
    const conditions = r.conditions.map((c, j) => checkCondition(c, `${field}.conditions.${j}`, details));
    if (r.conditions.length === 0)
      details.push({ field: `${field}.conditions`, message: 'must hold at least one condition' });
    const target = checkTarget(r.target, `${field}.target`, {
      checkUrl,
      details,
      destinations,
      variantIds,
      known: known.variants,
    });
    const name = r.name?.trim();
    return { id, ...(name ? { name } : {}), enabled: r.enabled ?? true, conditions, target };
  });
  return { rules, destinations };
}

/** The stored list (links.rules): null for none. */
export const rulesText = (rules: readonly Rule[]): string | null => (rules.length === 0 ? null : JSON.stringify(rules));

/** The stored list read back; a column written by hand that does not parse reads as no rules. */
export function rulesOf(text: string | null): Rule[] {
  if (text === null || text === '') return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? (parsed as Rule[]) : [];
  } catch {
    return [];
  }
}
