import type { TargetedSubmitEvent } from 'preact';
import { useState } from 'preact/hooks';
import type { AuditAction, AuditEntry } from '../api/client';
import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { Link } from '../router/Link';
import { navigate, useLocation, withQuery } from '../router/router';
import { useApi } from '../session/session';
import { DateTime } from '../ui/DateTime';
import { Field } from '../ui/Field';
import { oneOf } from '../ui/query-values';
import { AdminOnly, ErrorState, Loading } from '../ui/States';
import { TableHead } from '../ui/TableHead';
import { useTitle } from '../ui/use-title';
import { ACTION_LABELS, AUDIT_ACTIONS } from './audit-actions';

const PAGE_SIZE = 50;
const ACTOR_ID = /^[1-9][0-9]{0,15}$/;

const detailsText = (d: AuditEntry['details']): string =>
  d
    ? Object.entries(d)
        .map(([k, v]) => `${k}: ${String(v)}`)
        .join(', ')
    : '';

/** The filters, kept in the URL's query (a view can be shared); a new filter starts again from the newest entry. */
function AuditFilters({ action, actor }: { action: AuditAction | null; actor: string }) {
  const location = useLocation();
  const [actorInput, setActorInput] = useState(actor);
  const go = (changes: Record<string, string | null>) =>
    navigate(withQuery(location, { ...changes, cursor: null }), { replace: true });
  const submit = (e: TargetedSubmitEvent<HTMLFormElement>) => {
    e.preventDefault();
    go({ actor_id: actorInput.trim() });
  };
  return (
    <form class="filters" onSubmit={submit} aria-label="Filter the audit log">
      <Field label="Action">
        {(a) => (
          <select {...a} name="action" value={action ?? ''} onChange={(e) => go({ action: e.currentTarget.value })}>
            <option value="">Any action</option>
            {AUDIT_ACTIONS.map((x) => (
              <option key={x} value={x}>
                {ACTION_LABELS[x]} ({x})
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Actor id">
        {(a) => (
          <input
            {...a}
            name="actor_id"
            inputMode="numeric"
            size={8}
            value={actorInput}
            onInput={(e) => setActorInput(e.currentTarget.value)}
          />
        )}
      </Field>
      <button type="submit">Apply</button>
    </form>
  );
}

function AuditTable({ entries }: { entries: AuditEntry[] }) {
  const location = useLocation();
  return (
    <table class="table audit-table">
      <caption class="visually-hidden">Audit log, newest first</caption>
      <TableHead columns={['When', 'Who', 'Action', 'Target', 'Address', 'Details']} />
      <tbody>
        {entries.map((e) => (
          <tr key={e.id} data-action={e.action}>
            <td data-label="When">
              <DateTime iso={e.at} />
            </td>
            <td data-label="Who">
              {e.actor_id !== null ? (
                <Link
                  href={withQuery(location, { actor_id: String(e.actor_id), cursor: null })}
                  aria-label={`Only what ${e.actor ?? `user ${e.actor_id}`} did`}
                >
                  {e.actor ?? `user ${e.actor_id}`}
                </Link>
              ) : (
                (e.actor ?? '—')
              )}
            </td>
            <td data-label="Action">
              {ACTION_LABELS[e.action]} <code>{e.action}</code>
            </td>
            <td data-label="Target">{e.target_type ? `${e.target_type} ${e.target_id ?? ''}` : '—'}</td>
            <td data-label="Address">{e.ip ?? '—'}</td>
            <td data-label="Details">{detailsText(e.details)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The admins' audit log (SPEC §23). Not in other users' navigation, and refused here without asking the API. */
export function AuditPage() {
  useTitle('Audit log');
  return (
    <AdminOnly what="the audit log">
      <AuditLog />
    </AdminOnly>
  );
}

/** Newest first, filtered by action and actor in the URL, by cursor (older entries). */
function AuditLog() {
  const api = useApi();
  const location = useLocation();
  const action = oneOf(location.query.get('action'), AUDIT_ACTIONS);
  const actor = location.query.get('actor_id') ?? '';
  const cursor = location.query.get('cursor') ?? undefined;
  const log = useApiData(
    () =>
      outcome(
        api.GET('/api/v1/audit-log', {
          params: {
            query: {
              limit: PAGE_SIZE,
              ...(action ? { action } : {}),
              ...(ACTOR_ID.test(actor) ? { actor_id: Number(actor) } : {}),
              ...(cursor ? { cursor } : {}),
            },
          },
        }),
      ),
    [action, actor, cursor],
  );
  return (
    <>
      <h1>Audit log</h1>
      <AuditFilters key={actor} action={action} actor={actor} />
      {(action || actor || cursor) && (
        <p class="row">
          {cursor && <Link href={withQuery(location, { cursor: null })}>Newest entries</Link>}
          {(action || actor) && (
            <Link href={withQuery(location, { action: null, actor_id: null, cursor: null })}>Clear filters</Link>
          )}
        </p>
      )}
      {log.state === 'loading' && <Loading what="the audit log" />}
      {log.state === 'error' && <ErrorState problem={log.problem} onRetry={log.reload} />}
      {log.state === 'ready' && (
        <div aria-busy={log.updating}>
          {log.data.data.length === 0 ? <p>No entries.</p> : <AuditTable entries={log.data.data} />}
          {log.data.pagination.nextCursor && (
            <p>
              <Link href={withQuery(location, { cursor: log.data.pagination.nextCursor })}>Older entries</Link>
            </p>
          )}
        </div>
      )}
    </>
  );
}
