import type { LinkRow } from '../../db/types.js';
import { AppError, validationError, type ErrorDetail } from '../../lib/app-error.js';
import { assertDestinationsAllowed, NOTHING_BLOCKED, type HostBlocklist } from '../../lib/host-blocklist.js';
import { INSTANT_RULE, parseInstant } from '../../lib/instant.js';
import type { PasswordHasher } from '../users/index.js';
import type { LinkChanges } from './links.repository.js';
import type { LinkCreate, LinkPatch } from './links.schemas.js';
import { aliasesText, tagsText } from './link-lists.js';
import { checkOriginalUrl } from './original-url.js';
import type { TargetCheck } from './imported-link-rules.js';
import { isReservedCode } from './short-code.js';
import { checkRules, rulesOf, rulesText, type RuleDestination, type RuleInput } from './rules/index.js';
import { previewText } from './link-preview.js';
import { HEALTH_RESET, type HealthField } from './link-health-fields.js';

/** A creation body that passed every rule, its password already hashed: what the repository inserts. */
export interface LinkDraft {
  readonly prepared: true;
  shortCode: string | undefined;
  /** the `domain` asked for (its owner is checked at insertion) */
  domain: string | null | undefined;
  fields: Required<
    Omit<LinkChanges, 'original_url' | 'disabled_at' | 'disabled_reason' | 'domain_id' | HealthField>
  > & {
    original_url: string;
  };
}

/** SPEC §20: no alias may name a top-level path of the service, nor be the link's own code. */
function checkAliases(
  aliases: readonly string[] | null | undefined,
  code: string | undefined,
  details: ErrorDetail[],
): void {
  (aliases ?? []).forEach((alias, i) => {
    if (isReservedCode(alias))
      details.push({ field: `aliases.${i}`, message: 'is reserved: it names a path of this service' });
    else if (alias === code) details.push({ field: `aliases.${i}`, message: "is the link's own code" });
  });
}

/** Surrounding white space trimmed; an empty title is no title. */
export const titleText = (title: string | null | undefined): string | null => {
  const text = (title ?? '').trim();
  return text === '' ? null : text;
};

function checkExpiry(raw: string | null, now: number, details: ErrorDetail[]): number | null {
  if (raw === null) return null;
  const at = parseInstant(raw);
  if (at === null) details.push({ field: 'expires_at', message: INSTANT_RULE });
  else if (at <= now) details.push({ field: 'expires_at', message: 'must be in the future' });
  return at;
}

/**
 * SPEC §17: a password or a visit limit needs someone who can manage it; an anonymous link has nobody (only
 * an admin may change it), so it may have neither.
 */
function checkOwnedRules(
  anonymous: boolean,
  input: { password?: string | null; max_visits?: number | null },
  details: ErrorDetail[],
): void {
  if (!anonymous) return;
  if (input.password != null)
    details.push({
      field: 'password',
      message: 'needs an account: an anonymous link cannot have a password (send a bearer token)',
    });
  if (input.max_visits != null)
    details.push({
      field: 'max_visits',
      message: 'needs an account: an anonymous link cannot have a visit limit (send a bearer token)',
    });
}

/** The rules of a link's target that depend on this instance: where it is served, and which hosts it blocks. */
export function createTargetRules(deps: { publicBaseUrl: string; listenPort?: number; blockedHosts?: HostBlocklist }) {
  const { publicBaseUrl, listenPort } = deps;
  const blockedHosts = deps.blockedHosts ?? NOTHING_BLOCKED;
  return {
    /** `field`: where the URL is in the request (a rule's target is checked exactly as original_url is, SPEC §21). */
    checkUrl(raw: string, details: ErrorDetail[], field = 'original_url'): string | null {
      const url = checkOriginalUrl(raw, publicBaseUrl, listenPort);
      if (url.ok) return url.url;
      details.push({ field, message: url.reason });
      return null;
    },

    /**
     * BLOCKED_HOSTS_FILE (SPEC §18, §25): a well-formed target whose host (or a parent domain of it) is listed,
     * in any spelling, is refused as a whole, 422, after every field has been checked and before anything is hashed.
     * `more`: the rules' target URLs, each under its own field.
     */
    assertNotBlocked(url: string | null, more: readonly RuleDestination[] = []): void {
      assertDestinationsAllowed(
        blockedHosts,
        url === null ? more : [{ field: 'original_url', url }, ...more],
        'Links to this host are not allowed on this instance',
      );
    },

    /** The same rules for an importer's item (SPEC §25): the stored URL, or the error code the API would answer. */
    checkTarget(raw: string): ReturnType<TargetCheck> {
      const url = checkOriginalUrl(raw, publicBaseUrl, listenPort);
      if (!url.ok)
        return { ok: false, failure: { code: 'VALIDATION_ERROR', field: 'original_url', message: url.reason } };
      try {
        assertDestinationsAllowed(blockedHosts, [{ field: 'original_url', url: url.url }]);
      } catch (err) {
        if (!(err instanceof AppError) || err.code !== 'DESTINATION_BLOCKED') throw err;
        return {
          ok: false,
          failure: {
            code: 'DESTINATION_BLOCKED',
            field: 'original_url',
            message: err.details[0]?.message ?? err.message,
          },
        };
      }
      return url;
    },
  };
}

/** The patched fields that need no check beyond their schema, into `changes`. */
function copyPlainChanges(input: LinkPatch, changes: LinkChanges): void {
  if (input.max_visits !== undefined) changes.max_visits = input.max_visits;
  if (input.forward_query !== undefined) changes.forward_query = input.forward_query ? 1 : 0;
  if (input.tags !== undefined) changes.tags = tagsText(input.tags);
  if (input.title !== undefined) changes.title = titleText(input.title);
  if (input.aliases !== undefined) changes.aliases = aliasesText(input.aliases);
}

/** A new link's columns from its checked input. */
function draftFields(
  input: LinkCreate,
  url: string,
  expiresAt: number | null,
  passwordHash: string | null,
  rules: string | null,
  preview: string | null,
  fallbackUrl: string | null,
): LinkDraft['fields'] {
  return {
    fallback_url: fallbackUrl,
    original_url: url,
    expires_at: expiresAt,
    max_visits: input.max_visits ?? null,
    forward_query: input.forward_query ? 1 : 0,
    password_hash: passwordHash,
    tags: tagsText(input.tags),
    title: titleText(input.title),
    aliases: aliasesText(input.aliases),
    rules,
    preview,
  };
}

type TargetRules = ReturnType<typeof createTargetRules>;

/** A patched fallback_url (SPEC §24), checked as original_url is; null clears it. */
function patchFallback(
  sent: string | null | undefined,
  checkUrl: TargetRules['checkUrl'],
  changes: LinkChanges,
  details: ErrorDetail[],
): void {
  if (sent === undefined) return;
  const fallback = sent === null ? null : checkUrl(sent, details, 'fallback_url');
  if (sent === null || fallback !== null) changes.fallback_url = fallback;
}

/** A fallback_url (SPEC §24) is checked as original_url is: its blocked host refused under its own field. */
const fallbackDestination = (url: string | null): RuleDestination[] =>
  url === null ? [] : [{ field: 'fallback_url', url }];

/** SPEC §21: a list of rules checked, ids assigned (the link's `current` ones kept when sent back). */
const rulesChecker =
  (checkUrl: TargetRules['checkUrl']) =>
  (input: readonly RuleInput[], current: string | null, details: ErrorDetail[]) =>
    checkRules(input, rulesOf(current), (raw, field, d) => checkUrl(raw, d, field), details);

/** PUT /links/{code}/rules (SPEC §21): the list to store, its URLs checked (400, then 422 for a blocked host). */
const rulesReplacement =
  (rulesFrom: ReturnType<typeof rulesChecker>, assertNotBlocked: TargetRules['assertNotBlocked']) =>
  (current: Pick<LinkRow, 'rules'>, input: readonly RuleInput[]): string | null => {
    const details: ErrorDetail[] = [];
    const rules = rulesFrom(input, current.rules, details);
    if (details.length) throw validationError(details, 'Request body is invalid');
    assertNotBlocked(null, rules.destinations);
    return rulesText(rules.rules);
  };

/**
 * A code sent on creation must not name a path of this service; on a PATCH (`current`: the link's code) it may
 * only be echoed unchanged.
 */
function checkShortCode(sent: string | undefined, current: string | null, details: ErrorDetail[]): void {
  if (sent === undefined) return;
  if (current === null && isReservedCode(sent))
    details.push({ field: 'short_code', message: 'is reserved: it names a path of this service' });
  if (current !== null && sent !== current)
    details.push({
      field: 'short_code',
      message: 'cannot change: a printed link must keep pointing where it is managed',
    });
}

/**
 * The rules of a link's fields beyond their schema (SPEC §6, §13), shared by creation, PATCH and bulk
 * creation: every offending field is reported at once, and nothing is hashed before the rest is valid.
 */
export function createLinkInput(deps: {
  publicBaseUrl: string;
  listenPort?: number;
  passwords: Pick<PasswordHasher, 'hash'>;
  blockedHosts?: HostBlocklist;
}) {
  const { passwords } = deps;
  const { checkUrl, assertNotBlocked } = createTargetRules(deps);
  const rulesFrom = rulesChecker(checkUrl);
  const hashOf = (password: string | null): Promise<string | null> =>
    password === null ? Promise.resolve(null) : passwords.hash(password);

  return {
    /** `anonymous`: nobody will own the link (no caller). */
    async prepare(input: LinkCreate, now: number, anonymous: boolean): Promise<LinkDraft> {
      const details: ErrorDetail[] = [];
      const url = checkUrl(input.original_url, details);
      checkOwnedRules(anonymous, input, details);
      checkShortCode(input.short_code, null, details);
      checkAliases(input.aliases, input.short_code, details);
      const expiresAt = checkExpiry(input.expires_at ?? null, now, details);
      const rules = rulesFrom(input.rules ?? [], null, details);
      const preview = previewText(input.preview, details) ?? null;
      const fallback = input.fallback_url == null ? null : checkUrl(input.fallback_url, details, 'fallback_url');
      if (details.length || url === null) throw validationError(details, 'Request body is invalid');
      assertNotBlocked(url, [...rules.destinations, ...fallbackDestination(fallback)]);
      const passwordHash = await hashOf(input.password ?? null);
      const fields = draftFields(input, url, expiresAt, passwordHash, rulesText(rules.rules), preview, fallback);
      return { prepared: true, shortCode: input.short_code, domain: input.domain, fields };
    },

    /** The columns a merge patch changes; `short_code` may only be echoed unchanged. */
    async changes(
      current: Pick<LinkRow, 'short_code' | 'user_id' | 'rules' | 'original_url'>,
      input: LinkPatch,
      now: number,
    ): Promise<LinkChanges> {
      const details: ErrorDetail[] = [];
      const changes: LinkChanges = {};
      checkOwnedRules(current.user_id === null, input, details);
      checkShortCode(input.short_code, current.short_code, details);
      if (input.original_url !== undefined) {
        const url = checkUrl(input.original_url, details);
        // SPEC §24: a new destination is unchecked again
        if (url !== null && url !== current.original_url) Object.assign(changes, { original_url: url }, HEALTH_RESET);
      }
      patchFallback(input.fallback_url, checkUrl, changes, details);
      if (input.expires_at !== undefined) changes.expires_at = checkExpiry(input.expires_at, now, details);
      checkAliases(input.aliases, current.short_code, details);
      const rules = input.rules === undefined ? null : rulesFrom(input.rules ?? [], current.rules, details);
      const preview = previewText(input.preview, details);
      if (preview !== undefined) changes.preview = preview;
      if (details.length) throw validationError(details, 'Request body is invalid');
      assertNotBlocked(changes.original_url ?? null, [
        ...(rules?.destinations ?? []),
        ...fallbackDestination(changes.fallback_url ?? null),
      ]);
      if (rules !== null) changes.rules = rulesText(rules.rules);
      copyPlainChanges(input, changes);
      if (input.password !== undefined) changes.password_hash = await hashOf(input.password);
      return changes;
    },

    rules: rulesReplacement(rulesFrom, assertNotBlocked),
  };
}

export type LinkInput = ReturnType<typeof createLinkInput>;
