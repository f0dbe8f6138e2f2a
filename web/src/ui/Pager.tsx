import type { Pagination } from '../api/client';
import { Link } from '../router/Link';

/** Previous / next for a page-mode collection (SPEC §7); the page lives in the URL (`?page=`). */
export function Pager({
  pagination,
  hrefFor,
  label,
}: {
  pagination: Pagination;
  hrefFor: (page: number) => string;
  label: string;
}) {
  const page = pagination.page ?? 1;
  const pages = pagination.totalPages ?? 1;
  if (pages <= 1) return null;
  return (
    <nav class="pager" aria-label={label}>
      {page > 1 ? <Link href={hrefFor(page - 1)}>Previous page</Link> : <span aria-hidden="true" />}
      <span>
        Page {page} of {pages}
      </span>
      {page < pages ? <Link href={hrefFor(page + 1)}>Next page</Link> : <span aria-hidden="true" />}
    </nav>
  );
}
