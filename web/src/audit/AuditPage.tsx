import { outcome } from '../api/outcome';
import type { components } from '../api/openapi';
import { useApiData } from '../api/use-api-data';
import { Link } from '../router/Link';
import { useLocation, withQuery } from '../router/router';
import { useApi } from '../session/session';
import { DateTime } from '../ui/DateTime';
import { ErrorState, Loading } from '../ui/States';
import { useTitle } from '../ui/use-title';

type Entry = components['schemas']['AuditEntry'];
type Action = NonNullable<Entry['action']>;

const ACTIONS: Action[] = [
  'auth.sign_in',
  'auth.sign_in_failed',
  'auth.totp_enabled',
  'auth.totp_disabled',
  'user.role_changed',
  'user.status_changed',
  'api_key.created',
  'api_key.revoked',
  'domain.added',
  'domain.verified',
  'domain.removed',
  'link.disabled',
  'import.started',
  'backup.created',
  'backup.restored',
];

const detailsText = (d: Entry['details']): string =>
  d
    ? Object.entries(d)
        .map(([k, v]) => `${k}: ${String(v)}`)
        .join(', ')
    : '';

/** The filters, submitted into the URL's query (a view can be shared). */
function AuditFilters({ action, actor }: { action: string; actor: string }) {
  return (
    <form class="filters" method="get" action="">
      <label>
        Action{' '}
        <select name="action" value={action}>
          <option value="">Any</option>
          {ACTIONS.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
      </label>{' '}
      <label>
        Actor id <input name="actor_id" inputMode="numeric" value={actor} size={8} />
      </label>{' '}
      <button type="submit">Filter</button>
    </form>
  );
}

function AuditTable({ entries }: { entries: Entry[] }) {
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Who</th>
          <th scope="col">Action</th>
          <th scope="col">Target</th>
          <th scope="col">Address</th>
          <th scope="col">Details</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((e) => (
          <tr key={e.id}>
            <td>
              <DateTime iso={e.at} />
            </td>
            <td>{e.actor ?? '—'}</td>
            <td>{e.action}</td>
            <td>{e.target_type ? `${e.target_type} ${e.target_id ?? ''}` : '—'}</td>
            <td>{e.ip ?? '—'}</td>
            <td>{detailsText(e.details)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The admins' audit log (SPEC §23): newest first, filtered by action and actor in the URL, by cursor. */
export function AuditPage() {
  useTitle('Audit log');
  const api = useApi();
  const location = useLocation();
  const action = (location.query.get('action') ?? '') as Action | '';
  const actor = location.query.get('actor_id') ?? '';
  const cursor = location.query.get('cursor') ?? undefined;
  const log = useApiData(
    () =>
      outcome(
        api.GET('/api/v1/audit-log', {
          params: {
            query: {
              limit: 50,
              ...(action ? { action } : {}),
              ...(/^[1-9][0-9]{0,15}$/.test(actor) ? { actor_id: Number(actor) } : {}),
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
      <AuditFilters action={action} actor={actor} />
      {log.state === 'loading' && <Loading what="the audit log" />}
      {log.state === 'error' && <ErrorState problem={log.problem} onRetry={log.reload} />}
      {log.state === 'ready' && (
        <>
          <AuditTable entries={log.data.data} />
          {log.data.data.length === 0 && <p>No entries.</p>}
          {log.data.pagination.nextCursor && (
            <p>
              <Link href={withQuery(location, { cursor: log.data.pagination.nextCursor })}>Older entries</Link>
            </p>
          )}
        </>
      )}
    </>
  );
}
