import type { TargetedSubmitEvent } from 'preact';
import { useState } from 'preact/hooks';
import type { User } from '../api/client';
import { fieldMessage, type Problem } from '../api/problem';
import { SortField } from '../links/SortField';
import { navigate, useLocation, withQuery } from '../router/router';
import { Field } from '../ui/Field';
import { LINK_STATUSES, type AllLinksView } from './all-links-query';

/** Rewrites the URL's filters (back to page 1). */
type ApplyFilters = (changes: Record<string, string | null>) => void;

const STATUS_LABELS = { active: 'Active', disabled: 'Disabled', expired: 'Expired' } as const;

/** The owner filter: anyone, or one of the owners (an owner not among them, from the URL, is still shown). */
function OwnerField(props: { view: AllLinksView; owners: User[]; problem: Problem | null; apply: ApplyFilters }) {
  const { view, owners, problem, apply } = props;
  const ownerKnown = view.owner === null || owners.some((u) => u.id === view.owner);
  return (
    <Field label="Owner" error={fieldMessage(problem, 'user_id')}>
      {(a) => (
        <select
          {...a}
          name="owner"
          value={view.owner === null ? '' : String(view.owner)}
          onChange={(e) => apply({ owner: e.currentTarget.value || null })}
        >
          <option value="">Anyone</option>
          {!ownerKnown && <option value={String(view.owner)}>user #{view.owner}</option>}
          {owners.map((u) => (
            <option key={u.id} value={String(u.id)}>
              {u.username}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** The status filter: any, active, disabled or expired. */
function StatusField(props: { view: AllLinksView; problem: Problem | null; apply: ApplyFilters }) {
  const { view, problem, apply } = props;
  return (
    <Field label="Status" error={fieldMessage(problem, 'status')}>
      {(a) => (
        <select
          {...a}
          name="status"
          value={view.status ?? ''}
          onChange={(e) => apply({ status: e.currentTarget.value || null })}
        >
          <option value="">Any status</option>
          {LINK_STATUSES.map((s) => (
            <option key={s} value={s}>
              {STATUS_LABELS[s]}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/**
 * Search (on submit), owner, status and sort of All links (the last three at once); each rewrites the URL
 * (back to page 1) and the list follows it. The API's messages stand beside their fields.
 */
export function AllLinksFilters({
  view,
  owners,
  problem,
}: {
  view: AllLinksView;
  owners: User[];
  problem: Problem | null;
}) {
  const location = useLocation();
  const [q, setQ] = useState(view.q);
  const apply = (changes: Record<string, string | null>) =>
    navigate(withQuery(location, { ...changes, page: null }), { replace: true });
  const submit = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    apply({ q: q.trim() || null });
  };
  return (
    <form class="filters link-filters" onSubmit={submit} role="search" aria-label="Find links">
      <Field label="Search" error={fieldMessage(problem, 'q')}>
        {(a) => (
          <input
            {...a}
            name="q"
            type="search"
            placeholder="Destination, code or title"
            value={q}
            onInput={(e) => setQ(e.currentTarget.value)}
          />
        )}
      </Field>
      <button type="submit">Apply</button>
      <OwnerField view={view} owners={owners} problem={problem} apply={apply} />
      <StatusField view={view} problem={problem} apply={apply} />
      <SortField sort={view.sort} onSort={(sort) => apply({ sort })} />
      {(view.q || view.owner !== null || view.status) && (
        <button
          type="button"
          class="link-button"
          onClick={() => {
            setQ('');
            apply({ q: null, owner: null, status: null });
          }}
        >
          Clear filters
        </button>
      )}
    </form>
  );
}
