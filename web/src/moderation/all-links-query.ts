import { SORTS, SORT_KEYS, type SortKey } from '../links/link-list-query';
import { oneOf, positiveInt } from '../ui/query-values';

/** The admin list's `status` filter (SPEC §18). */
export const LINK_STATUSES = ['active', 'disabled', 'expired'] as const;
export type LinkStatus = (typeof LINK_STATUSES)[number];

/**
 * All links' view as it sits in the URL (`?q=&owner=&status=&sort=&page=`), and the query of GET /links it
 * stands for. `owner` is a user id; the sorts are My links' (the API sorts both lists alike).
 */
export interface AllLinksView {
  q: string;
  owner: number | null;
  status: LinkStatus | null;
  sort: SortKey;
  page: number;
}

/** An id as the API writes it (a canonical decimal integer up to 2^53-1), or null. */
function userId(raw: string | null): number | null {
  if (raw === null || !/^[1-9]\d{0,15}$/.test(raw)) return null;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : null;
}

export function allLinksView(query: URLSearchParams): AllLinksView {
  return {
    q: query.get('q') ?? '',
    owner: userId(query.get('owner')),
    status: oneOf(query.get('status'), LINK_STATUSES),
    sort: oneOf(query.get('sort'), SORT_KEYS) ?? 'newest',
    page: positiveInt(query.get('page')) ?? 1,
  };
}

export function allLinksQuery(view: AllLinksView, limit: number) {
  const { sort, order } = SORTS[view.sort];
  return {
    page: view.page,
    limit,
    sort,
    order,
    ...(view.q ? { q: view.q } : {}),
    ...(view.owner !== null ? { user_id: view.owner } : {}),
    ...(view.status ? { status: view.status } : {}),
  };
}
