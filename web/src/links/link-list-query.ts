import { oneOf, positiveInt } from '../ui/query-values';

/**
 * My links' view as it sits in the URL (`?q=&tag=&sort=&page=`), and the API query it stands for. `sort`
 * names one of the orders people ask for; each is a field and a direction of GET /users/{id}/links.
 */
export const SORTS = {
  newest: { label: 'Newest first', sort: 'created_at', order: 'desc' },
  oldest: { label: 'Oldest first', sort: 'created_at', order: 'asc' },
  clicks: { label: 'Most clicks (people and bots)', sort: 'click_count', order: 'desc' },
  expiring: { label: 'Expiring soonest', sort: 'expires_at', order: 'asc' },
} as const;
export type SortKey = keyof typeof SORTS;
export const SORT_KEYS = Object.keys(SORTS) as SortKey[];

export interface LinkListView {
  q: string;
  tag: string;
  sort: SortKey;
  page: number;
  /** SPEC §24: only the broken links (`?health=broken`) */
  broken: boolean;
}

export function linkListView(query: URLSearchParams): LinkListView {
  return {
    q: query.get('q') ?? '',
    tag: query.get('tag') ?? '',
    sort: oneOf(query.get('sort'), SORT_KEYS) ?? 'newest',
    page: positiveInt(query.get('page')) ?? 1,
    broken: query.get('health') === 'broken',
  };
}

export function linkListQuery(view: LinkListView, limit: number) {
  const { sort, order } = SORTS[view.sort];
  return {
    page: view.page,
    limit,
    sort,
    order,
    ...(view.q ? { q: view.q } : {}),
    ...(view.tag ? { tag: view.tag } : {}),
    ...(view.broken ? { health: 'broken' as const } : {}),
  };
}
