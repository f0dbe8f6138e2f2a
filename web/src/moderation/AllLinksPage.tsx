import { useState } from 'preact/hooks';
import type { User } from '../api/client';
import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { useLocation, withQuery } from '../router/router';
import { useApi } from '../session/session';
import { PagedList } from '../ui/PagedList';
import { AdminOnly } from '../ui/States';
import { useTitle } from '../ui/use-title';
import { AllLinksFilters } from './AllLinksFilters';
import { allLinksQuery, allLinksView } from './all-links-query';
import { AllLinksTable } from './AllLinksTable';

const PAGE_SIZE = 25;
/** Owners offered by name: the first users by name (the most a page of GET /users holds); others show by id. */
const OWNER_CHOICES = 100;

/**
 * All links, for admins (GET /links, SPEC §18): searched, filtered by owner and status, sorted and paged, all
 * in the URL; each link can be disabled with a reason (its visits then answer 410) and enabled again (PATCH
 * /links/{code}). Not in the navigation of other users, and refused here without asking the API.
 */
export function AllLinksPage() {
  useTitle('All links');
  return (
    <AdminOnly what="all links">
      <AllLinks />
    </AdminOnly>
  );
}

function AllLinks() {
  const api = useApi();
  const location = useLocation();
  const search = location.query.toString();
  const view = allLinksView(location.query);
  const [announcement, setAnnouncement] = useState('');
  const links = useApiData(
    () => outcome(api.GET('/api/v1/links', { params: { query: allLinksQuery(view, PAGE_SIZE) } })),
    [search],
  );
  const users = useApiData(
    () =>
      outcome(
        api.GET('/api/v1/users', { params: { query: { limit: OWNER_CHOICES, sort: 'username', order: 'asc' } } }),
      ),
    [],
  );
  const owners = new Map<number, User>(users.state === 'ready' ? users.data.data.map((u) => [u.id, u]) : []);
  const changed = (message: string) => {
    setAnnouncement(message);
    links.reload();
  };
  const filtered = Boolean(view.q || view.owner !== null || view.status);
  return (
    <>
      <h1>All links</h1>
      <AllLinksFilters
        key={view.q}
        view={view}
        owners={[...owners.values()]}
        problem={links.state === 'error' ? links.problem : null}
      />
      <p class="visually-hidden" role="status" aria-live="polite">
        {announcement}
      </p>
      <PagedList
        list={links}
        noun={['link', 'links']}
        loadingWhat="all links"
        empty={<p>{filtered ? 'No link matches these filters.' : 'Nobody has made a link yet.'}</p>}
        pagerLabel="Pages of all links"
        hrefForPage={(p) => withQuery(location, { page: p === 1 ? null : String(p) })}
      >
        {(items) => (
          <AllLinksTable
            links={items}
            owners={owners}
            ownerHref={(id) => withQuery(location, { owner: String(id), page: null })}
            onChanged={changed}
          />
        )}
      </PagedList>
    </>
  );
}
