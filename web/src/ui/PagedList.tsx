import type { ComponentChildren } from 'preact';
import type { Pagination } from '../api/client';
import type { Loadable } from '../api/use-api-data';
import { Pager } from './Pager';
import { Empty, ErrorState, Loading } from './States';

interface PagedListProps<T> {
  list: Loadable<{ data: T[]; pagination: Pagination }> & { reload: () => void };
  /** "link" / "links": the count line and the loading message */
  noun: [one: string, many: string];
  loadingWhat: string;
  /** shown when the page has no items */
  empty: ComponentChildren;
  pagerLabel: string;
  hrefForPage: (page: number) => string;
  children: (items: T[]) => ComponentChildren;
}

/**
 * A page-mode collection (SPEC §7) in each of its states: loading, the API's error with a retry, empty,
 * or the items with their count and the pager. The list stays on screen, marked busy, while a new page loads.
 */
export function PagedList<T>({ list, noun, loadingWhat, empty, pagerLabel, hrefForPage, children }: PagedListProps<T>) {
  if (list.state === 'loading') return <Loading what={loadingWhat} />;
  if (list.state === 'error') return <ErrorState problem={list.problem} onRetry={list.reload} />;
  const { data, pagination } = list.data;
  if (data.length === 0) return <Empty>{empty}</Empty>;
  return (
    <div aria-busy={list.updating}>
      <p class="count">
        {pagination.total} {pagination.total === 1 ? noun[0] : noun[1]}
      </p>
      {children(data)}
      <Pager pagination={pagination} label={pagerLabel} hrefFor={hrefForPage} />
    </div>
  );
}
