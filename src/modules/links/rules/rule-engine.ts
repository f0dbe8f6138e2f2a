/**
 * A link's rules compiled once (when the redirect caches the link) into matchers, and their evaluation for one
 * visit (SPEC §21): the conditions of a rule all must match (AND), the values of one condition are alternatives
 * (OR), the first enabled rule that matches wins. Pure: a visit's facts come through `RuleVisit`, read lazily,
 * so a rule that never asks for the device never describes the user agent.
 */
import { ipMatcher } from './rule-ip.js';
import type { Condition, ConditionType, Rule, Variant } from './rule-model.js';
import { rulesOf } from './rule-validation.js';

/** What a visit tells the rules; each read at most once per evaluation (`RuleProbe` keeps the answers). */
export interface RuleVisit {
  /** the user agent described once (clicks' UserAgentFacts: os and browser as ua-parser-js names them) */
  readonly agent: {
    readonly isBot: boolean;
    readonly os: string | null;
    readonly browser: string | null;
    readonly device: string;
  };
  readonly userAgent: string | undefined;
  /** Accept-Language's ranges with q > 0, lower case, most preferred first */
  readonly languages: readonly string[];
  readonly country: string | null;
  /** the client address as TRUST_PROXY resolves it */
  readonly ip: string | undefined;
  readonly referrer: string | undefined;
}

/** One evaluation's view of a visit: derived facts computed on first use. */
export class RuleProbe {
  #platform: Set<string> | undefined;
  #params: URLSearchParams | undefined;
  #referrerHost: string | null | undefined;

  constructor(
    readonly visit: RuleVisit,
    /** the raw query string after `?` ('' without one) */
    private readonly queryString: string,
    readonly now: number,
  ) {}

  /** The device values of §21 that hold for this visit (device-detection.ts's reading of the user agent). */
  get platform(): Set<string> {
    return (this.#platform ??= platformOf(this.visit.agent, this.visit.userAgent));
  }

  get params(): URLSearchParams {
    return (this.#params ??= new URLSearchParams(this.queryString));
  }

  get referrerHost(): string | null {
    if (this.#referrerHost === undefined) {
      let host: string | null = null;
      try {
        if (this.visit.referrer) host = new URL(this.visit.referrer).hostname.toLowerCase().replace(/\.$/, '');
      } catch {
        host = null;
      }
      this.#referrerHost = host;
    }
    return this.#referrerHost;
  }
}

const MAC_OS = new Set(['Mac OS', 'macOS']);
const LINUX_OS = new Set([
  'Linux',
  'Ubuntu',
  'Debian',
  'Fedora',
  'Arch',
  'Mint',
  'openSUSE',
  'Gentoo',
  'Red Hat',
  'CentOS',
  'Kubuntu',
  'Xubuntu',
  'Lubuntu',
  'Manjaro',
  'Slackware',
  'Mandriva',
  'Zenwalk',
  'elementary OS',
]);
const CHROME_OS = new Set(['Chromium OS', 'Chrome OS']);
const BROWSER_NAMES: Record<string, readonly string[]> = {
  chrome: ['Chrome', 'Mobile Chrome', 'Chrome WebView', 'Chrome Headless', 'Chromium'],
  firefox: ['Firefox', 'Mobile Firefox', 'Firefox Focus', 'Firefox Reality'],
  safari: ['Safari', 'Mobile Safari'],
  edge: ['Edge'],
  opera: ['Opera', 'Opera Mini', 'Opera Mobi', 'Opera GX', 'Opera Touch', 'Opera Coast', 'Opera Tablet'],
  samsung: ['Samsung Internet'],
};
const BROWSER_OF = new Map<string, string>(
  Object.entries(BROWSER_NAMES).flatMap(([value, names]) => names.map((n) => [n, value] as [string, string])),
);

/**
 * The device values a user agent shows. An iPad names itself ("iPad; CPU OS") unless it asks for desktop sites,
 * iPadOS's default in Safari since 13: then it sends a Mac's user agent. Apps' web views on an iPad keep the
 * "Mobile/" token a Mac's Safari never sends, so those read as iPadOS; Safari's own desktop-mode agent is a
 * Mac's, byte for byte, and reads as macOS (docs/routing.md).
 */
export function platformOf(agent: RuleVisit['agent'], userAgent: string | undefined): Set<string> {
  const out = new Set<string>();
  const os = agent.os ?? '';
  const ipad =
    (os === 'iOS' && agent.device === 'tablet') ||
    (MAC_OS.has(os) && userAgent !== undefined && / Mobile\/\w+/.test(userAgent));
  if (ipad) out.add('ipados').add('tablet');
  else {
    if (os === 'iOS') out.add('ios');
    if (MAC_OS.has(os)) out.add('macos');
    if (agent.device === 'mobile' || agent.device === 'tablet' || agent.device === 'desktop') out.add(agent.device);
  }
  if (os === 'Android') out.add('android');
  if (os.startsWith('Windows')) out.add('windows');
  if (LINUX_OS.has(os)) out.add('linux');
  if (CHROME_OS.has(os)) out.add('chromeos');
  return out;
}

/** The §21 browser value of a user agent's browser family, or null. */
export const browserOf = (browser: string | null): string | null =>
  browser === null ? null : (BROWSER_OF.get(browser) ?? null);

/** `en` matches en, en-US, en-GB; `pt-BR` matches pt-BR (and pt-Latn-BR), not pt or pt-PT. */
function languageMatcher(values: readonly string[]): (p: RuleProbe) => boolean {
  const wanted = values.map((v) => {
    const [primary = '', ...rest] = v.toLowerCase().split('-');
    return { primary, region: rest.find((s) => s.length === 2 || /^\d{3}$/.test(s)) ?? rest[0] ?? null };
  });
  return (p) =>
    p.visit.languages.some((tag) => {
      const [primary = '', ...rest] = tag.split('-');
      return wanted.some((w) => w.primary === primary && (w.region === null || rest.includes(w.region)));
    });
}

/** One condition as a test of a visit. */
export function compileCondition(c: Condition): (p: RuleProbe) => boolean {
  const values = c.values;
  switch (c.type) {
    case 'device':
      return (p) => values.some((v) => p.platform.has(v));
    case 'browser': {
      const set = new Set(values);
      return (p) => {
        const b = browserOf(p.visit.agent.browser);
        return b !== null && set.has(b);
      };
    }
    case 'language':
      return languageMatcher(values);
    case 'country': {
      const set = new Set(values.map((v) => v.toUpperCase()));
      return (p) => {
        const country = p.visit.country;
        return country !== null && set.has(country.toUpperCase());
      };
    }
    case 'ip': {
      const matches = ipMatcher(values);
      return (p) => matches(p.visit.ip);
    }
    case 'query': {
      const key = c.key ?? '';
      if (c.match === 'present') return (p) => p.params.has(key);
      if (c.match === 'absent') return (p) => !p.params.has(key);
      const set = new Set(values);
      return (p) => p.params.getAll(key).some((v) => set.has(v));
    }
    case 'referrer_host':
      return (p) => {
        const host = p.referrerHost;
        return host !== null && values.some((v) => host === v || host.endsWith(`.${v}`));
      };
    case 'after': {
      const at = Date.parse(values[0] ?? '');
      return (p) => p.now >= at;
    }
    case 'before': {
      const at = Date.parse(values[0] ?? '');
      return (p) => p.now < at;
    }
  }
}

export interface CompiledSplit {
  variants: readonly Variant[];
  sticky: boolean;
  /** running sums of the weights (the last is 100) */
  bounds: readonly number[];
  byId: ReadonlyMap<string, Variant>;
}

export interface CompiledRule {
  id: string;
  enabled: boolean;
  conditions: ReadonlyArray<{ type: ConditionType; test: (p: RuleProbe) => boolean }>;
  target: { url: string; split: null } | { url: null; split: CompiledSplit };
}

export interface CompiledRules {
  readonly rules: readonly CompiledRule[];
}

function compileRule(r: Rule): CompiledRule {
  const conditions = r.conditions.map((c) => ({ type: c.type, test: compileCondition(c) }));
  if ('url' in r.target)
    return { id: r.id, enabled: r.enabled, conditions, target: { url: r.target.url, split: null } };
  const variants = r.target.split;
  let sum = 0;
  const bounds = variants.map((v) => (sum += v.weight));
  return {
    id: r.id,
    enabled: r.enabled,
    conditions,
    target: {
      url: null,
      split: { variants, sticky: r.target.sticky, bounds, byId: new Map(variants.map((v) => [v.id, v])) },
    },
  };
}

/** A link's stored rules (links.rules) compiled; null when it has none. */
export function compileRules(text: string | null): CompiledRules | null {
  const rules = rulesOf(text);
  return rules.length === 0 ? null : { rules: rules.map(compileRule) };
}

/** The first enabled rule whose conditions all match, or null. */
export function firstMatch(compiled: CompiledRules, probe: RuleProbe): CompiledRule | null {
  for (const rule of compiled.rules) {
    if (!rule.enabled) continue;
    let all = true;
    for (const c of rule.conditions) {
      if (!c.test(probe)) {
        all = false;
        break;
      }
    }
    if (all) return rule;
  }
  return null;
}

/** The dry run's trace: every rule, every condition evaluated (a disabled rule: matched false, its conditions shown). */
export interface RuleTrace {
  rule_id: string;
  matched: boolean;
  conditions: Array<{ type: ConditionType; matched: boolean }>;
}

export function traceRules(
  compiled: CompiledRules,
  probe: RuleProbe,
): { winner: CompiledRule | null; trace: RuleTrace[] } {
  let winner: CompiledRule | null = null;
  const trace = compiled.rules.map((rule) => {
    const conditions = rule.conditions.map((c) => ({ type: c.type, matched: c.test(probe) }));
    const matched = rule.enabled && conditions.every((c) => c.matched);
    if (matched && winner === null) winner = rule;
    return { rule_id: rule.id, matched, conditions };
  });
  return { winner, trace };
}

/** A variant by weight: `draw` is uniform in [0, 100). */
export function chooseVariant(split: CompiledSplit, draw: number): Variant {
  const { bounds, variants } = split;
  for (let i = 0; i < bounds.length; i += 1) if (draw < bounds[i]!) return variants[i]!;
  return variants[variants.length - 1]!;
}
