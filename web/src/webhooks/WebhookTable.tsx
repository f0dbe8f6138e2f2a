import type { Webhook } from '../api/client';
import { Link } from '../router/Link';
import { appPath } from '../router/router';
import { useUser } from '../session/session';
import { DateTime } from '../ui/DateTime';
import { TableHead } from '../ui/TableHead';
import { hookScope, hookState } from './webhook-events';

/** The hooks, one row each, each leading to its own screen (its actions and delivery log); at phone width, cards. */
export function WebhookTable({ hooks }: { hooks: Webhook[] }) {
  const user = useUser();
  return (
    <table class="table hooks-table">
      <caption class="visually-hidden">Webhooks</caption>
      <TableHead columns={['Receiver', 'Events', 'Hears', 'State', 'Created']} />
      <tbody>
        {hooks.map((h) => (
          <tr key={h.id} data-hook={h.id}>
            <td data-label="Receiver">
              <Link href={appPath(`/webhooks/${h.id}`)} class="hook-url">
                {h.url}
              </Link>
              {h.description && <div class="muted">{h.description}</div>}
            </td>
            <td data-label="Events">
              {h.events.join(', ')}
              {h.include_bots && h.events.includes('link.clicked') ? ' (bots too)' : ''}
            </td>
            <td data-label="Hears">{hookScope(h, user.id)}</td>
            <td data-label="State">{hookState(h)}</td>
            <td data-label="Created">
              <DateTime iso={h.created_at} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
