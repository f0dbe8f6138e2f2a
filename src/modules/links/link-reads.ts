import type { LinkRow } from '../../db/types.js';
import { notFound } from '../../lib/app-error.js';
import type { Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import type { PageResult, Paginator } from '../../lib/pagination.js';
import type { UsersRepository } from '../users/index.js';
import { assertMayManage, assertMayRead } from './link-access.js';
import { viewerOf, type LinkDomains } from './link-domains.js';
import { renderQr, type QrFormat } from './link-qr.js';
import type { LinksRepository } from './links.repository.js';
import { LINK_SORT_COLUMNS, NULL_IS_LAST, type Link, type LinkListQueryT } from './links.schemas.js';

/** A live link by code on the request's domain as `caller` names it; 404 when there is none (see createLiveLinkFinder). */
export type FindLiveLink = (code: string, domain: string | undefined, caller: Caller | null) => Promise<LinkRow>;

/** Expired at `now`: gone for the API at once, before the sweep removes its row. */
export const isExpired = (row: Pick<LinkRow, 'expires_at'>, now: number): boolean =>
  row.expires_at !== null && row.expires_at <= now;

/**
 * A link as the API sees it: an expired link is gone at once, before the sweep removes its row. `domain`
 * is the `?domain=` of the request (absent: the default domain), which names the caller's own claim of an
 * unverified host name (SPEC §25); an unknown one has no links.
 */
export function createLiveLinkFinder(deps: {
  links: Pick<LinksRepository, 'findByCode'>;
  domains: Pick<LinkDomains, 'idOf'>;
  clock: Clock;
}): FindLiveLink {
  const { links, domains, clock } = deps;
  return async (code, domain, caller) => {
    const domainId = await domains.idOf(domain, viewerOf(caller));
    const row = domainId === null ? undefined : await links.findByCode(code, domainId);
    if (!row || isExpired(row, clock.now())) throw notFound('Link');
    return row;
  };
}

/** A link, its QR code and a user's list of links, each for whoever may see them. */
export function createLinkReads(deps: {
  links: Pick<LinksRepository, 'listByUser'>;
  users: Pick<UsersRepository, 'findById'>;
  domains: Pick<LinkDomains, 'shortUrl' | 'listFilter' | 'ensureKnown'>;
  clock: Clock;
  paginator: Paginator;
  findLive: FindLiveLink;
  toLink: (row: LinkRow) => Link;
}) {
  const { links, users, domains, clock, paginator, findLive, toLink } = deps;
  return {
    /** The link for a reader (SPEC §17): see assertMayRead. */
    async get(code: string, caller: Caller | null, domain?: string): Promise<LinkRow> {
      const row = await findLive(code, domain, caller);
      assertMayRead(row, caller);
      return row;
    },

    /** The short URL as a QR code (whoever may read the link may have it). */
    async qr(
      code: string,
      caller: Caller | null,
      format: QrFormat,
      size: number,
      domain?: string,
    ): Promise<string | Buffer> {
      const row = await findLive(code, domain, caller);
      assertMayRead(row, caller);
      return renderQr(domains.shortUrl(row), format, size);
    },

    /** Owner or admin (anonymous links: admin only): what PATCH, DELETE and the click records need. */
    async getForOwner(code: string, caller: Caller | null, domain?: string): Promise<LinkRow> {
      const row = await findLive(code, domain, caller);
      assertMayManage(row, caller);
      return row;
    },

    /** Stats: the owner or an admin; anyone for an anonymous link (SPEC §6). */
    async getForStats(code: string, caller: Caller | null, domain?: string): Promise<LinkRow> {
      const row = await findLive(code, domain, caller);
      if (row.user_id !== null) assertMayManage(row, caller);
      return row;
    },

    /** `keyDomains`: the domains of the caller's API key, when it is limited to some (only their links are listed). */
    async listForUser(
      userId: number,
      query: LinkListQueryT,
      requestUrl: string,
      cursorOnly = false,
      keyDomains: readonly number[] | null = null,
    ): Promise<PageResult<Link>> {
      if (!(await users.findById(userId))) throw notFound('User');
      const byDomain = await domains.listFilter(query.domain, keyDomains, { userId, admin: false }); // their own claim of a name
      const filter = { tag: query.tag?.toLowerCase(), q: query.q, health: query.health, ...byDomain };
      const list = paginator.resolve(query, LINK_SORT_COLUMNS, { user: userId, ...filter }, cursorOnly, NULL_IS_LAST);
      const { rows, total } = await links.listByUser(userId, clock.now(), list, filter);
      await domains.ensureKnown(rows);
      const sortValue = (r: LinkRow): number => (r[list.sortColumn as keyof LinkRow] as number | null) ?? list.nullsAs!;
      return paginator.page(rows, list, total, requestUrl, toLink, sortValue);
    },
  };
}
