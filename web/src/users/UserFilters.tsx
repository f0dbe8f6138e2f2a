import type { User } from '../api/client';
import { navigate, useLocation, withQuery } from '../router/router';
import { Field } from '../ui/Field';

export const ROLES: readonly User['role'][] = ['user', 'admin'];
export const STATUSES: readonly User['status'][] = ['pending', 'active', 'suspended'];

interface FilterSelectProps {
  label: string;
  /** the query key it sets */
  name: string;
  value: string | null;
  anyLabel: string;
  options: readonly string[];
}

/** One filter: a labelled select whose choice rewrites the URL (back to page 1); the list follows. */
function FilterSelect({ label, name, value, anyLabel, options }: FilterSelectProps) {
  const location = useLocation();
  return (
    <Field label={label}>
      {(a) => (
        <select
          {...a}
          name={name}
          value={value ?? ''}
          onChange={(e) =>
            navigate(withQuery(location, { [name]: e.currentTarget.value, page: null }), { replace: true })
          }
        >
          <option value="">{anyLabel}</option>
          {options.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

export function UserFilters({ role, status }: { role: User['role'] | null; status: User['status'] | null }) {
  return (
    <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter users">
      <FilterSelect label="Role" name="role" value={role} anyLabel="Any role" options={ROLES} />
      <FilterSelect label="Status" name="status" value={status} anyLabel="Any status" options={STATUSES} />
    </form>
  );
}
