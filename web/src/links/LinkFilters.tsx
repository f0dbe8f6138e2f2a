import type { TargetedSubmitEvent } from 'preact';
import { useState } from 'preact/hooks';
import { fieldMessage, type Problem } from '../api/problem';
import { navigate, useLocation, withQuery } from '../router/router';
import { Field } from '../ui/Field';
import type { LinkListView } from './link-list-query';
import { SortField } from './SortField';

/** SPEC §24: only the links whose destination checks found broken (`?health=broken`). */
function BrokenOnly({ checked, onChange }: { checked: boolean; onChange: (on: boolean) => void }) {
  return (
    <label class="checkbox">
      <input type="checkbox" name="broken" checked={checked} onChange={(e) => onChange(e.currentTarget.checked)} />
      Broken links only
    </label>
  );
}

/**
 * Search (`q`), tag filter and sort of My links. Search and tag apply on submit (Enter), sort at once;
 * each rewrites the URL (back to page 1) and the list follows it. The API's messages (a malformed tag)
 * stand beside their fields.
 */
export function LinkFilters({ view, problem }: { view: LinkListView; problem: Problem | null }) {
  const location = useLocation();
  const [q, setQ] = useState(view.q);
  const [tag, setTag] = useState(view.tag);
  const apply = (changes: Record<string, string | null>) =>
    navigate(withQuery(location, { ...changes, page: null }), { replace: true });
  const submit = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    apply({ q: q.trim(), tag: tag.trim() });
  };
  return (
    <form class="filters link-filters" onSubmit={submit} role="search" aria-label="Find links">
      <Field label="Search" error={fieldMessage(problem, 'q')}>
        {(a) => (
          <input
            {...a}
            name="q"
            type="search"
            placeholder="Destination or code"
            value={q}
            onInput={(e) => setQ(e.currentTarget.value)}
          />
        )}
      </Field>
      <Field label="Tag" error={fieldMessage(problem, 'tag')}>
        {(a) => (
          <input
            {...a}
            name="tag"
            autocomplete="off"
            autocapitalize="off"
            spellcheck={false}
            value={tag}
            onInput={(e) => setTag(e.currentTarget.value)}
          />
        )}
      </Field>
      <button type="submit">Apply</button>
      {(view.q || view.tag) && (
        <button
          type="button"
          class="link-button"
          onClick={() => {
            setQ('');
            setTag('');
            apply({ q: null, tag: null });
          }}
        >
          Clear filters
        </button>
      )}
      <BrokenOnly checked={view.broken} onChange={(on) => apply({ health: on ? 'broken' : null })} />
      <SortField sort={view.sort} onSort={(sort) => apply({ sort })} />
    </form>
  );
}
