import {
  ALIAS_PATTERN,
  CODE_PATTERN,
  isReservedCode,
  type CheckedLink,
  type ImportedLink,
  type ImportedLinkCheck,
  type ImportFailure,
} from '../links/index.js';
import { normalizeHostname } from '../domains/index.js';
import type { ImportItem } from './import-item.js';

/** A source item as the Ferry link it becomes, or why it cannot become one (with the API's error code). */
export type ItemPlan = { ok: true; link: CheckedLink } | { ok: false; failure: ImportFailure };

export interface PlanContext {
  publicBaseUrl: string;
  /** the source's names of its default domain (besides null) */
  sourceDefaults: readonly string[];
  /** FROM → TO (a host name, or `default`); `default` as FROM names the source's default domain */
  domainMap: Readonly<Record<string, string>>;
  /** the links module's rules for a link (SPEC §25: the API's own) */
  check: (link: ImportedLink) => ImportedLinkCheck;
}

const FITS_SHORT_CODE = new RegExp(CODE_PATTERN);
const FITS_ALIAS = new RegExp(ALIAS_PATTERN);
const fitsAlias = (name: string): boolean => FITS_ALIAS.test(name) && !isReservedCode(name);
/**
 * Where a source's domain lands in Ferry: null for Ferry's default domain (the source's default, or the host of
 * PUBLIC_BASE_URL), a host name as Ferry keeps it, or undefined when the name is no host name Ferry can serve
 * (an address, a port, a single label).
 */
export function mapDomain(sourceDomain: string | null, ctx: PlanContext): string | null | undefined {
  const domain = sourceDomain?.toLowerCase() ?? null;
  const isDefault = domain === null || ctx.sourceDefaults.includes(domain);
  // Own entries only: a source's domain named `constructor` or `__proto__` must not find Object's members.
  const mapOf = (name: string): string | undefined =>
    Object.hasOwn(ctx.domainMap, name) ? ctx.domainMap[name] : undefined;
  const mapped = (domain !== null ? mapOf(domain) : undefined) ?? (isDefault ? mapOf('default') : undefined);
  const host = mapped !== undefined ? (mapped === 'default' ? null : mapped) : isDefault ? null : domain;
  if (host === null) return null;
  const name = normalizeHostname(host);
  if (name === null) return undefined;
  return name === new URL(ctx.publicBaseUrl).hostname.toLowerCase() ? null : name;
}

/**
 * The Ferry link a source item becomes (SPEC §20, §25): on the mapped domain, with the same code where it fits
 * short_code (else the code is the first alias of a generated code), checked by the links module's rules — the
 * API's own. What is dropped or changed on the way is said in the link's notes, per item.
 */
export function planItem(item: ImportItem, ctx: PlanContext): ItemPlan {
  const domain = mapDomain(item.domain, ctx);
  if (domain === undefined) {
    return {
      ok: false,
      failure: {
        code: 'VALIDATION_ERROR',
        field: 'domain',
        message: `the domain ${JSON.stringify(item.domain)} is not a host name Ferry can serve: map it with --domain-map (domain_map)`,
      },
    };
  }
  const fits = item.code !== '' && FITS_SHORT_CODE.test(item.code) && !isReservedCode(item.code);
  if (item.code !== '' && !fits && !fitsAlias(item.code)) {
    const code = JSON.stringify(item.code.slice(0, 100));
    return {
      ok: false,
      failure: {
        code: 'VALIDATION_ERROR',
        field: 'short_code',
        message: `the code ${code} fits neither short_code (1-8 of 0-9a-zA-Z) nor an alias (1-64 of 0-9a-zA-Z_-), or is reserved`,
      },
    };
  }
  const codeIsAlias = item.code !== '' && !fits;
  const checked = ctx.check({
    domain,
    shortCode: fits ? item.code : null,
    aliases: codeIsAlias ? [item.code, ...item.aliases] : item.aliases,
    originalUrl: item.target,
    createdAt: item.createdAt,
    expiresAt: item.expiresAt,
    maxVisits: item.maxVisits,
    forwardQuery: item.forwardQuery,
    tags: item.tags,
    title: item.title,
    rules: item.rules ?? [],
  });
  if (!checked.ok) return checked;
  const notes = [...item.notImported];
  if (codeIsAlias)
    notes.push({
      field: 'code',
      reason: `${JSON.stringify(item.code)} does not fit short_code (1-8 of 0-9a-zA-Z): it is an alias of a generated code`,
    });
  return { ok: true, link: { ...checked.link, notes: [...notes, ...checked.link.notes] } };
}
