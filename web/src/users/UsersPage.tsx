import { useState } from 'preact/hooks';
import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { useLocation, withQuery } from '../router/router';
import { useApi } from '../session/session';
import { PagedList } from '../ui/PagedList';
import { oneOf, positiveInt } from '../ui/query-values';
import { useTitle } from '../ui/use-title';
import { ROLES, STATUSES, UserFilters } from './UserFilters';
import { UserTable } from './UserTable';

const PAGE_SIZE = 25;

/**
 * Users, for admins (GET /users): filtered by role and status, a page at a time, all in the URL; each row
 * can be activated, suspended or given another role (PATCH /users/{id} with the row's version, so a change
 * made meanwhile by someone else is refused rather than overwritten).
 */
export function UsersPage() {
  useTitle('Users');
  const api = useApi();
  const location = useLocation();
  const role = oneOf(location.query.get('role'), ROLES);
  const status = oneOf(location.query.get('status'), STATUSES);
  const page = positiveInt(location.query.get('page')) ?? 1;
  const [announcement, setAnnouncement] = useState('');
  const users = useApiData(
    () =>
      outcome(
        api.GET('/api/v1/users', {
          params: {
            query: {
              page,
              limit: PAGE_SIZE,
              sort: 'createdAt',
              order: 'desc',
              ...(role ? { role } : {}),
              ...(status ? { status } : {}),
            },
          },
        }),
      ),
    [role, status, page],
  );

  const changed = (message: string) => {
    setAnnouncement(message);
    users.reload();
  };

  return (
    <>
      <h1>Users</h1>
      <UserFilters role={role} status={status} />
      <p class="visually-hidden" role="status" aria-live="polite">
        {announcement}
      </p>
      <PagedList
        list={users}
        noun={['user', 'users']}
        loadingWhat="users"
        empty={<p>No user matches these filters.</p>}
        pagerLabel="Pages of users"
        hrefForPage={(p) => withQuery(location, { page: p === 1 ? null : String(p) })}
      >
        {(items) => <UserTable users={items} onChanged={changed} />}
      </PagedList>
    </>
  );
}
