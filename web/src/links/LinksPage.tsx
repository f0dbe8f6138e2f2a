import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { Link } from '../router/Link';
import { appPath, useLocation, withQuery } from '../router/router';
import { useApi, useUser } from '../session/session';
import { Pager } from '../ui/Pager';
import { Empty, ErrorState, Loading } from '../ui/States';
import { useTitle } from '../ui/use-title';
import { positiveInt } from '../ui/query-values';
import { LinkTable } from './LinkTable';

const PAGE_SIZE = 20;

/**
 * My links (GET /users/{id}/links): newest first, a page at a time (`?page=` in the URL), with click
 * counts, copy and analytics. Phase 2 adds search, tag filter and sort as more query keys.
 */
export function LinksPage() {
  useTitle('My links');
  const api = useApi();
  const user = useUser();
  const location = useLocation();
  const page = positiveInt(location.query.get('page')) ?? 1;
  const links = useApiData(
    () => outcome(api.GET('/api/v1/users/{id}/links', { params: { path: { id: user.id }, query: { page, limit: PAGE_SIZE, sort: 'created_at', order: 'desc' } } })),
    [user.id, page],
  );

  return (
    <>
      <div class="page-head">
        <h1>My links</h1>
        <Link href={appPath('/links/new')} class="button">
          New link
        </Link>
      </div>
      {links.state === 'loading' && <Loading what="your links" />}
      {links.state === 'error' && <ErrorState problem={links.problem} onRetry={links.reload} />}
      {links.state === 'ready' && links.data.data.length === 0 && (
        <Empty>
          {page > 1 ? (
            <p>
              No links on this page. <Link href={withQuery(location, { page: null })}>Go to the first page</Link>
            </p>
          ) : (
            <p>
              You have no links yet. <Link href={appPath('/links/new')}>Create your first link</Link>
            </p>
          )}
        </Empty>
      )}
      {links.state === 'ready' && links.data.data.length > 0 && (
        <div aria-busy={links.updating}>
          <p class="count">
            {links.data.pagination.total} {links.data.pagination.total === 1 ? 'link' : 'links'}
          </p>
          <LinkTable links={links.data.data} onDeleted={links.reload} />
          <Pager pagination={links.data.pagination} label="Pages of links" hrefFor={(p) => withQuery(location, { page: p === 1 ? null : String(p) })} />
        </div>
      )}
    </>
  );
}
