import type { LinkRow } from '../../db/types.js';
import { AppError, forbidden } from '../../lib/app-error.js';
import { isAdmin, keyAllowsDomain, type Caller } from '../../lib/caller.js';

// Who may create, read and manage a link: the rules every read and write of the links service applies.

export const unauthenticated = (): AppError =>
  new AppError('UNAUTHENTICATED', 'A bearer token is required', [], { 'WWW-Authenticate': 'Bearer realm="ferry"' });

/** An API key limited to domains (SPEC §19) acts on their links only. */
function assertKeyDomain(row: LinkRow, caller: Caller | null): void {
  if (!keyAllowsDomain(caller, row.domain_id))
    throw forbidden("This API key is limited to other domains than this link's");
}

/** Owner or admin; an anonymous link (or one whose owner was deleted) only an admin (SPEC §6). */
export function assertMayManage(row: LinkRow, caller: Caller | null): void {
  if (!caller) throw unauthenticated();
  assertKeyDomain(row, caller);
  if (isAdmin(caller) || (row.user_id !== null && row.user_id === caller.userId)) return;
  throw forbidden(
    row.user_id === null
      ? 'Only an admin may manage an anonymous link'
      : 'Only the owner or an admin may manage this link',
  );
}

/**
 * Who may read a link (SPEC §17): an anonymous link, anyone; an owned link, its owner (or the owner's key
 * with links:read, checked by the route's access policy) and admins. A link that guards its target with a
 * password or a visit limit never shows it to anyone else, even when nobody owns it (any more): the lookup
 * must not give away what the redirect withholds.
 */
export function assertMayRead(row: LinkRow, caller: Caller | null): void {
  assertKeyDomain(row, caller);
  if (isAdmin(caller) || (row.user_id !== null && row.user_id === caller?.userId)) return;
  if (row.user_id !== null) throw forbidden('Only the owner or an admin may read this link');
  if (row.password_hash !== null || row.max_visits !== null)
    throw forbidden('Only an admin may read this link: its target is behind a password or a visit limit');
}

/**
 * Who may create links (SPEC §18): anyone unless ANONYMOUS_LINKS=false (`anonymousLinks`), and of the
 * signed-in only active accounts (a pending one waits for an admin's approval, as orders do).
 */
export function assertMayCreateLink(caller: Caller | null, anonymousLinks: boolean): void {
  if (!caller) {
    if (!anonymousLinks) throw unauthenticated();
    return;
  }
  if (caller.status !== 'active')
    throw new AppError('ACCOUNT_NOT_ACTIVE', `Only an active account may create links; this one is ${caller.status}`);
}
