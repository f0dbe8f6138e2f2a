import type { components } from '../../api/openapi';

/** A rule as the API shows it (SPEC §21). */
export type Rule = components['schemas']['LinkRule'];
export type Condition = Rule['conditions'][number];
export type ConditionType = Condition['type'];
export type QueryMatch = NonNullable<Condition['match']>;

/** The condition types in the order the editor offers them, each with its words. */
export const CONDITION_TYPES: ReadonlyArray<{ type: ConditionType; label: string; hint: string }> = [
  {
    type: 'device',
    label: 'Device',
    hint: 'ios, android, ipados, mobile, tablet, desktop, windows, macos, linux, chromeos',
  },
  { type: 'browser', label: 'Browser', hint: 'chrome, firefox, safari, edge, opera, samsung' },
  { type: 'language', label: 'Language', hint: 'language tags such as en or pt-BR' },
  { type: 'country', label: 'Country', hint: 'two-letter codes such as DE or US' },
  { type: 'ip', label: 'IP address', hint: 'addresses or ranges such as 203.0.113.0/24' },
  { type: 'query', label: 'Query parameter', hint: 'the values the parameter may have' },
  { type: 'referrer_host', label: 'Referrer', hint: 'hosts such as example.com (subdomains match too)' },
  { type: 'after', label: 'After', hint: 'one date and time, ISO 8601 (2027-01-01T00:00:00Z)' },
  { type: 'before', label: 'Before', hint: 'one date and time, ISO 8601 (2027-01-01T00:00:00Z)' },
];

/** A condition as the editor's inputs hold it: the values as one comma-separated text. */
export interface ConditionDraft {
  type: ConditionType;
  key: string;
  match: QueryMatch;
  values: string;
}

export interface VariantDraft {
  id?: string;
  url: string;
  weight: string;
}

/** A rule as the editor's inputs hold it; `split` false: one URL, true: weighted variants. */
export interface RuleDraft {
  id?: string;
  name: string;
  enabled: boolean;
  conditions: ConditionDraft[];
  split: boolean;
  url: string;
  variants: VariantDraft[];
  sticky: boolean;
}

export const newCondition = (): ConditionDraft => ({ type: 'device', key: '', match: 'equals', values: '' });
export const newVariant = (weight = ''): VariantDraft => ({ url: '', weight });
export const newRule = (): RuleDraft => ({
  name: '',
  enabled: true,
  conditions: [newCondition()],
  split: false,
  url: '',
  variants: [newVariant('50'), newVariant('50')],
  sticky: true,
});

export function draftOf(rule: Rule): RuleDraft {
  const split = 'split' in rule.target ? rule.target : null;
  return {
    id: rule.id,
    name: rule.name ?? '',
    enabled: rule.enabled,
    conditions: rule.conditions.map((c) => ({
      type: c.type,
      key: c.key ?? '',
      match: c.match ?? 'equals',
      values: c.values.join(', '),
    })),
    split: split !== null,
    url: 'url' in rule.target ? rule.target.url : '',
    variants: split
      ? split.split.map((v) => ({ id: v.id, url: v.url, weight: String(v.weight) }))
      : [newVariant('50'), newVariant('50')],
    sticky: split?.sticky ?? true,
  };
}

/** "a, b ,c" → ["a", "b", "c"]; a query value may be empty on purpose only through the API. */
const valuesOf = (text: string): string[] =>
  text
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');

function conditionBody(c: ConditionDraft) {
  if (c.type !== 'query') return { type: c.type, values: valuesOf(c.values) };
  return { type: c.type, key: c.key.trim(), match: c.match, values: c.match === 'equals' ? valuesOf(c.values) : [] };
}

/** The PUT's body: the rules as the API takes them, in the editor's order (ids sent back, so they stay). */
export function rulesBody(drafts: readonly RuleDraft[]) {
  return {
    rules: drafts.map((d) => ({
      ...(d.id ? { id: d.id } : {}),
      ...(d.name.trim() ? { name: d.name.trim() } : {}),
      enabled: d.enabled,
      conditions: d.conditions.map(conditionBody),
      target: d.split
        ? {
            split: d.variants.map((v) => ({
              ...(v.id ? { id: v.id } : {}),
              url: v.url.trim(),
              weight: Number(v.weight),
            })),
            sticky: d.sticky,
          }
        : { url: d.url.trim() },
    })),
  };
}

/** What a split's weights add up to (a weight that is no number counts as 0). */
export const weightSum = (variants: readonly VariantDraft[]): number =>
  variants.reduce(
    (sum, v) => sum + (Number.isInteger(Number(v.weight)) && v.weight.trim() !== '' ? Number(v.weight) : 0),
    0,
  );

/** The rules whose split does not add up to 100 (numbered from 1), which the editor will not send. */
export const unbalancedSplits = (drafts: readonly RuleDraft[]): number[] =>
  drafts.flatMap((d, i) => (d.split && weightSum(d.variants) !== 100 ? [i + 1] : []));

/** A list with the item at `i` moved by `by` places (up: -1, down: +1), unchanged past either end. */
export function moved<T>(list: readonly T[], i: number, by: -1 | 1): T[] {
  const j = i + by;
  if (j < 0 || j >= list.length) return [...list];
  const out = [...list];
  [out[i], out[j]] = [out[j]!, out[i]!];
  return out;
}

export const replaced = <T>(list: readonly T[], i: number, item: T): T[] => list.map((x, k) => (k === i ? item : x));
export const removed = <T>(list: readonly T[], i: number): T[] => list.filter((_, k) => k !== i);
