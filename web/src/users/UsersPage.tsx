import { useState } from 'preact/hooks';
import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { useLocation, withQuery } from '../router/router';
import { useApi } from '../session/session';
import { Pager } from '../ui/Pager';
import { Empty, ErrorState, Loading } from '../ui/States';
import { useTitle } from '../ui/use-title';
import { oneOf, positiveInt } from '../ui/query-values';
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
    () => outcome(api.GET('/api/v1/users', { params: { query: { page, limit: PAGE_SIZE, sort: 'createdAt', order: 'desc', ...(role ? { role } : {}), ...(status ? { status } : {}) } } })),
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
      {users.state === 'loading' && <Loading what="users" />}
      {users.state === 'error' && <ErrorState problem={users.problem} onRetry={users.reload} />}
      {users.state === 'ready' && users.data.data.length === 0 && (
        <Empty>
          <p>No user matches these filters.</p>
        </Empty>
      )}
      {users.state === 'ready' && users.data.data.length > 0 && (
        <div aria-busy={users.updating}>
          <p class="count">
            {users.data.pagination.total} {users.data.pagination.total === 1 ? 'user' : 'users'}
          </p>
          <UserTable users={users.data.data} onChanged={changed} />
          <Pager pagination={users.data.pagination} label="Pages of users" hrefFor={(p) => withQuery(location, { page: p === 1 ? null : String(p) })} />
        </div>
      )}
    </>
  );
}
