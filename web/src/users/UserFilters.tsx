import type { User } from '../api/client';
import { navigate, useLocation, withQuery } from '../router/router';
import { Field } from '../ui/Field';

export const ROLES: readonly User['role'][] = ['user', 'admin'];
export const STATUSES: readonly User['status'][] = ['pending', 'active', 'suspended'];

/** Role and status filters; each choice rewrites the URL (back to page 1) and the list follows. */
export function UserFilters({ role, status }: { role: User['role'] | null; status: User['status'] | null }) {
  const location = useLocation();
  const set = (key: 'role' | 'status', value: string) => navigate(withQuery(location, { [key]: value, page: null }), { replace: true });
  return (
    <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter users">
      <Field label="Role">
        {(a) => (
          <select {...a} name="role" value={role ?? ''} onChange={(e) => set('role', e.currentTarget.value)}>
            <option value="">Any role</option>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Status">
        {(a) => (
          <select {...a} name="status" value={status ?? ''} onChange={(e) => set('status', e.currentTarget.value)}>
            <option value="">Any status</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        )}
      </Field>
    </form>
  );
}
