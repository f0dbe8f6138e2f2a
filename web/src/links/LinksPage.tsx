import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { Link } from '../router/Link';
import { appPath, useLocation, withQuery } from '../router/router';
import { useApi, useUser } from '../session/session';
import { PagedList } from '../ui/PagedList';
import { useTitle } from '../ui/use-title';
import { LinkFilters } from './LinkFilters';
import { linkListQuery, linkListView } from './link-list-query';
import { LinkTable } from './LinkTable';

const PAGE_SIZE = 20;

/** What an empty list says: nothing matches the filters, the page is past the end, or no link yet. */
function EmptyLinks({ view }: { view: ReturnType<typeof linkListView> }) {
  const location = useLocation();
  const filtered = Boolean(view.q || view.tag);
  return filtered ? (
    <p>No link matches {view.q && view.tag ? 'this search and tag' : view.q ? 'this search' : 'this tag'}.</p>
  ) : view.page > 1 ? (
    <p>
      No links on this page. <Link href={withQuery(location, { page: null })}>Go to the first page</Link>
    </p>
  ) : (
    <p>
      You have no links yet. <Link href={appPath('/links/new')}>Create your first link</Link>
    </p>
  );
}

/**
 * My links (GET /users/{id}/links): searched, filtered by tag, sorted and paged, all in the URL (so a view
 * can be shared), with click counts, copy, QR, edit and analytics.
 */
export function LinksPage() {
  useTitle('My links');
  const api = useApi();
  const user = useUser();
  const location = useLocation();
  const search = location.query.toString();
  const view = linkListView(location.query);
  const links = useApiData(
    () =>
      outcome(
        api.GET('/api/v1/users/{id}/links', {
          params: { path: { id: user.id }, query: linkListQuery(view, PAGE_SIZE) },
        }),
      ),
    [user.id, search],
  );
  const empty = <EmptyLinks view={view} />;

  return (
    <>
      <div class="page-head">
        <h1>My links</h1>
        <Link href={appPath('/links/new')} class="button">
          New link
        </Link>
      </div>
      <LinkFilters
        key={`${view.q}\n${view.tag}`}
        view={view}
        problem={links.state === 'error' ? links.problem : null}
      />
      <PagedList
        list={links}
        noun={['link', 'links']}
        loadingWhat="your links"
        empty={empty}
        pagerLabel="Pages of links"
        hrefForPage={(p) => withQuery(location, { page: p === 1 ? null : String(p) })}
      >
        {(items) => (
          <LinkTable
            links={items}
            onDeleted={links.reload}
            tagHref={(tag) => withQuery(location, { tag, page: null })}
          />
        )}
      </PagedList>
    </>
  );
}
