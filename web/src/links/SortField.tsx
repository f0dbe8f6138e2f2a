import { Field } from '../ui/Field';
import { SORT_KEYS, SORTS } from './link-list-query';

/** The sort menu of a list of links (My links, All links): `newest`, the default, leaves the URL without `sort`. */
export function SortField({ sort, onSort }: { sort: string; onSort: (sort: string | null) => void }) {
  return (
    <Field label="Sort">
      {(a) => (
        <select
          {...a}
          name="sort"
          value={sort}
          onChange={(e) => onSort(e.currentTarget.value === 'newest' ? null : e.currentTarget.value)}
        >
          {SORT_KEYS.map((k) => (
            <option key={k} value={k}>
              {SORTS[k].label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
