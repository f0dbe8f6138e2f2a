import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { Link } from '../router/Link';
import { appPath, useLocation, withQuery } from '../router/router';
import { useApi, useUser } from '../session/session';
import { PagedList } from '../ui/PagedList';
import { positiveInt } from '../ui/query-values';
import { useTitle } from '../ui/use-title';
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
  const empty =
    page > 1 ? (
      <p>
        No links on this page. <Link href={withQuery(location, { page: null })}>Go to the first page</Link>
      </p>
    ) : (
      <p>
        You have no links yet. <Link href={appPath('/links/new')}>Create your first link</Link>
      </p>
    );

  return (
    <>
      <div class="page-head">
        <h1>My links</h1>
        <Link href={appPath('/links/new')} class="button">
          New link
        </Link>
      </div>
      <PagedList
        list={links}
        noun={['link', 'links']}
        loadingWhat="your links"
        empty={empty}
        pagerLabel="Pages of links"
        hrefForPage={(p) => withQuery(location, { page: p === 1 ? null : String(p) })}
      >
        {(items) => <LinkTable links={items} onDeleted={links.reload} />}
      </PagedList>
    </>
  );
}
