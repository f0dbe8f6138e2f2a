import type { RuleInput } from '../../links/index.js';
import type { NotImported } from '../import-item.js';
import { isObject, stringOrNull } from './source-http.js';

/**
 * Shlink's redirect rules (4.0+: GET /rest/v3/short-urls/{shortCode}/redirect-rules →
 * `{ defaultLongUrl, redirectRules: [{ longUrl, priority, conditions: [{ type, matchKey, matchValue }] }] }`)
 * as Ferry's rules (SPEC §21): each Shlink rule becomes one rule with a `{ url }` target, in Shlink's order of
 * priority; each Shlink condition (one value each) becomes one Ferry condition, all of a rule's ANDed as Shlink
 * does. A rule with a condition that has no twin here is left out whole — dropping only the condition would send
 * more visitors to its URL than Shlink did — and named in the item's report.
 */
export function shlinkRules(body: unknown): { rules: RuleInput[]; notes: NotImported[] } {
  const list = isObject(body) && Array.isArray(body.redirectRules) ? body.redirectRules : [];
  const ordered = list
    .filter(isObject)
    .map((r, i) => ({ r, i, priority: typeof r.priority === 'number' ? r.priority : Number.MAX_SAFE_INTEGER }))
    .sort((a, b) => a.priority - b.priority || a.i - b.i);
  const rules: RuleInput[] = [];
  const notes: NotImported[] = [];
  for (const [n, { r }] of ordered.entries()) {
    const url = stringOrNull(r.longUrl);
    const conditions = Array.isArray(r.conditions) ? r.conditions.filter(isObject) : [];
    const mapped = conditions.map(conditionOf);
    const missing = mapped.find((c): c is { unmapped: string } => 'unmapped' in c);
    if (url === null || conditions.length === 0 || missing) {
      const why = missing?.unmapped ?? (url === null ? 'it has no long URL' : 'it has no conditions');
      notes.push({ field: `redirectRules.${n}`, reason: `the rule was left out: ${why}` });
      continue;
    }
    rules.push({
      name: `Shlink rule ${n + 1}`,
      conditions: mapped as RuleInput['conditions'],
      target: { url },
    });
  }
  return { rules, notes };
}

type Mapped = RuleInput['conditions'][number] | { unmapped: string };

/** Shlink's DeviceType values; each is one of Ferry's device values. */
const SHLINK_DEVICES = new Set(['android', 'ios', 'mobile', 'desktop', 'windows', 'macos', 'linux', 'chromeos']);

/**
 * One Shlink condition as a Ferry condition, or why it has no twin. Shlink's `ip-address` takes an address, a
 * CIDR or a pattern with `*` for whole trailing octets (`192.168.1.*`): those are CIDRs here; a `*` before a
 * number (`10.*.0.1`) is no range a CIDR can say.
 */
function conditionOf(c: Record<string, unknown>): Mapped {
  const type = stringOrNull(c.type) ?? '';
  const key = stringOrNull(c.matchKey);
  const value = stringOrNull(c.matchValue) ?? '';
  switch (type) {
    case 'device':
      return SHLINK_DEVICES.has(value.toLowerCase())
        ? { type: 'device', values: [value.toLowerCase()] }
        : { unmapped: `the device ${JSON.stringify(value)} is not one Ferry tells apart` };
    case 'browser':
      return { type: 'browser', values: [value.toLowerCase()] };
    case 'language':
      // Shlink accepts en_US as well as en-US.
      return { type: 'language', values: [value.replace(/_/g, '-')] };
    case 'query-param':
      return key === null
        ? { unmapped: 'a query-param condition without a key' }
        : { type: 'query', key, values: [value] };
    case 'any-value-query-param':
      return key === null || key === ''
        ? { unmapped: 'an any-value-query-param condition without a key' }
        : { type: 'query', key, match: 'present' };
    case 'valueless-query-param':
      // `?key` or `?key=`: the parameter with an empty value.
      return key === null || key === ''
        ? { unmapped: 'a valueless-query-param condition without a key' }
        : { type: 'query', key, match: 'equals', values: [''] };
    case 'ip-address': {
      const range = ipRangeOf(value);
      return range === null
        ? { unmapped: `the address pattern ${JSON.stringify(value)} is no address or CIDR` }
        : { type: 'ip', values: [range] };
    }
    case 'geolocation-country-code':
      return { type: 'country', values: [value.toUpperCase()] };
    case 'before-date':
      return { type: 'before', values: [value] };
    case 'after-date':
      return { type: 'after', values: [value] };
    default:
      return { unmapped: `Ferry has no ${JSON.stringify(type.slice(0, 40))} condition` };
  }
}

/** `192.168.1.*` → 192.168.1.0/24, `10.*.*.*` → 10.0.0.0/8; an address or CIDR as it is; another pattern: null. */
function ipRangeOf(value: string): string | null {
  if (!value.includes('*')) return value;
  const octets = value.split('.');
  if (octets.length !== 4) return null;
  const fixed = octets.findIndex((o) => o === '*');
  if (fixed === 0 || octets.slice(fixed).some((o) => o !== '*')) return null;
  const prefix = octets.slice(0, fixed);
  return `${[...prefix, ...Array(4 - fixed).fill('0')].join('.')}/${fixed * 8}`;
}
