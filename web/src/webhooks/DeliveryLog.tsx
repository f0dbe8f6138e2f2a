import { useEffect, useRef } from 'preact/hooks';
import type { WebhookDelivery } from '../api/client';
import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { Link } from '../router/Link';
import { useLocation, withQuery } from '../router/router';
import { useApi } from '../session/session';
import { DateTime } from '../ui/DateTime';
import { Empty, ErrorState, Loading } from '../ui/States';
import { TableHead } from '../ui/TableHead';

const PAGE_SIZE = 25;
/** While an attempt due within this long is pending, the log is read again every POLL_MS, at most MAX_POLLS times. */
const DUE_SOON_MS = 10_000;
const POLL_MS = 1_500;
const MAX_POLLS = 40;

const pendingSoon = (rows: WebhookDelivery[]): boolean =>
  rows.some(
    (d) =>
      d.attempted_at === null && d.next_attempt_at !== null && Date.parse(d.next_attempt_at) - Date.now() < DUE_SOON_MS,
  );

/** What became of an attempt: delivered, refused with a status, no answer, or not made yet. */
function Result({ d }: { d: WebhookDelivery }) {
  if (d.attempted_at === null) return <span class="badge badge-pending">Pending</span>;
  if (d.error === null) return <span class="badge badge-active">Delivered {d.status_code}</span>;
  return (
    <span class="badge badge-suspended" title={d.error}>
      {d.status_code ?? 'Failed'}: {d.error}
    </span>
  );
}

function DeliveryRow({ d, onRedeliver }: { d: WebhookDelivery; onRedeliver: (d: WebhookDelivery) => void }) {
  return (
    <tr data-delivery={d.id}>
      <td data-label="When">{d.attempted_at ? <DateTime iso={d.attempted_at} /> : 'Not yet'}</td>
      <td data-label="Event">
        {d.event_type} <code class="event-id">{d.event_id}</code>
      </td>
      <td data-label="Attempt" class="num">
        {d.attempt}
      </td>
      <td data-label="Result">
        <Result d={d} />
        {d.duration_ms !== null && <span class="muted"> in {d.duration_ms} ms</span>}
      </td>
      <td data-label="Response">
        {d.response_body ? (
          <details>
            <summary>Response</summary>
            <pre class="response-body">{d.response_body}</pre>
          </details>
        ) : (
          '—'
        )}
      </td>
      <td data-label="Next attempt">{d.next_attempt_at ? <DateTime iso={d.next_attempt_at} /> : '—'}</td>
      <td class="actions">
        {d.attempted_at !== null && (
          <button
            type="button"
            class="link-button"
            aria-label={`Redeliver ${d.event_type} ${d.event_id} (attempt ${d.id})`}
            onClick={() => onRedeliver(d)}
          >
            Redeliver
          </button>
        )}
      </td>
    </tr>
  );
}

/** The attempts of one page, newest first, each with its Redeliver. */
function DeliveryTable({ rows, onRedeliver }: { rows: WebhookDelivery[]; onRedeliver: (d: WebhookDelivery) => void }) {
  return (
    <table class="table deliveries-table">
      <caption class="visually-hidden">Delivery attempts, newest first</caption>
      <TableHead
        columns={[
          'When',
          'Event',
          { label: 'Attempt', numeric: true },
          'Result',
          'Response',
          'Next attempt',
          { label: 'Actions', hidden: true },
        ]}
      />
      <tbody>
        {rows.map((d) => (
          <DeliveryRow key={d.id} d={d} onRedeliver={onRedeliver} />
        ))}
      </tbody>
    </table>
  );
}

/**
 * The log's page (the cursor in the URL), read again when `round` changes (the screen's actions) and, while an
 * attempt due now is pending, every POLL_MS until it is made (at most MAX_POLLS times).
 */
function useDeliveryLog(hookId: number, cursor: string | undefined, round: number, onMessage: (m: string) => void) {
  const api = useApi();
  const log = useApiData(
    () =>
      outcome(
        api.GET('/api/v1/webhooks/{id}/deliveries', {
          params: { path: { id: hookId }, query: { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [hookId, cursor, round],
  );
  const polls = useRef(0);
  useEffect(() => {
    polls.current = 0;
  }, [round]);
  const shown = log.state === 'ready' && !log.updating ? log.data.data : null;
  useEffect(() => {
    if (!shown || !pendingSoon(shown) || polls.current >= MAX_POLLS) return;
    const timer = setTimeout(() => {
      polls.current += 1;
      log.reload();
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [shown]);

  const redeliver = async (d: WebhookDelivery) => {
    const res = await outcome(
      api.POST('/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver', {
        params: { path: { id: hookId, delivery_id: d.id } },
      }),
    );
    onMessage(res.ok ? `${d.event_type} ${d.event_id} is on its way again.` : res.problem.message);
    polls.current = 0;
    log.reload();
  };
  return { log, redeliver };
}

/**
 * A hook's delivery attempts (GET …/deliveries: newest first, by cursor), each with its status, the first 1 KB
 * of the answer and Redeliver (the same event, the same webhook-id, as a new chain). A pending attempt due now
 * is made by the server moments later, so the log reads itself again until it is.
 */
export function DeliveryLog({
  hookId,
  round,
  onMessage,
}: {
  hookId: number;
  round: number;
  onMessage: (m: string) => void;
}) {
  const location = useLocation();
  const cursor = location.query.get('cursor') ?? undefined;
  const { log, redeliver } = useDeliveryLog(hookId, cursor, round, onMessage);
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      <p class="row">
        <button type="button" class="secondary" onClick={log.reload}>
          Refresh
        </button>
        {cursor && <Link href={withQuery(location, { cursor: null })}>Newest attempts</Link>}
      </p>
      {log.state === 'loading' && <Loading what="the deliveries" />}
      {log.state === 'error' && <ErrorState problem={log.problem} onRetry={log.reload} />}
      {log.state === 'ready' && log.data.data.length === 0 && (
        <Empty>
          <p>Nothing was sent to this webhook yet. Send it a test event.</p>
        </Empty>
      )}
      {log.state === 'ready' && log.data.data.length > 0 && (
        <div aria-busy={log.updating}>
          <DeliveryTable rows={log.data.data} onRedeliver={(d) => void redeliver(d)} />
          {log.data.pagination.nextCursor && (
            <p>
              <Link href={withQuery(location, { cursor: log.data.pagination.nextCursor })}>Older attempts</Link>
            </p>
          )}
        </div>
      )}
    </section>
  );
}
