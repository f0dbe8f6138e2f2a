import { useState } from 'preact/hooks';
import type { Webhook } from '../api/client';
import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { Link } from '../router/Link';
import { appPath } from '../router/router';
import { useApi, useUser } from '../session/session';
import { DateTime } from '../ui/DateTime';
import { ErrorState, Loading } from '../ui/States';
import { useTitle } from '../ui/use-title';
import { DeliveryLog } from './DeliveryLog';
import { NewSecret } from './NewSecret';
import { WebhookActions } from './WebhookActions';
import { hookScope, hookState } from './webhook-events';

function HookFacts({ hook }: { hook: Webhook }) {
  const user = useUser();
  return (
    <dl class="hook-facts">
      <dt>Receiver</dt>
      <dd class="hook-url">{hook.url}</dd>
      {hook.description && (
        <>
          <dt>Description</dt>
          <dd>{hook.description}</dd>
        </>
      )}
      <dt>Events</dt>
      <dd>
        {hook.events.join(', ')}
        {hook.include_bots && hook.events.includes('link.clicked') ? " (bots' clicks too)" : ''}
      </dd>
      <dt>Hears</dt>
      <dd>{hookScope(hook, user.id)}</dd>
      <dt>State</dt>
      <dd data-testid="hook-state">{hookState(hook)}</dd>
      <dt>Created</dt>
      <dd>
        <DateTime iso={hook.created_at} />
      </dd>
    </dl>
  );
}

/** One hook (GET /webhooks/{id}): what it hears, its actions, a rotated secret shown once, and its delivery log. */
export default function WebhookPage({ id }: { id: string }) {
  useTitle(`Webhook ${id}`);
  const api = useApi();
  const hookId = /^[1-9][0-9]{0,15}$/.test(id) ? Number(id) : 0;
  const hook = useApiData(
    () => outcome(api.GET('/api/v1/webhooks/{id}', { params: { path: { id: hookId } } })),
    [hookId],
  );
  const [secret, setSecret] = useState<string | null>(null);
  const [message, setMessage] = useState('');
  // Bumped by the screen's actions: the delivery log reads itself again.
  const [round, setRound] = useState(0);
  const queued = (m: string) => {
    setMessage(m);
    setRound((r) => r + 1);
  };
  return (
    <>
      <p>
        <Link href={appPath('/webhooks')}>All webhooks</Link>
      </p>
      <h1>Webhook {id}</h1>
      {hook.state === 'loading' && <Loading what="the webhook" />}
      {hook.state === 'error' && <ErrorState problem={hook.problem} onRetry={hook.reload} />}
      {hook.state === 'ready' && (
        <>
          <HookFacts hook={hook.data} />
          {secret && <NewSecret heading="Secret rotated" secret={secret} onDone={() => setSecret(null)} />}
          <WebhookActions hook={hook.data} onChanged={hook.reload} onQueued={queued} onRotated={setSecret} />
          <p class="notice" role="status" hidden={!message}>
            {message}
          </p>
          <DeliveryLog hookId={hook.data.id} round={round} onMessage={setMessage} />
        </>
      )}
    </>
  );
}
