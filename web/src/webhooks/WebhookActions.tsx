import { useState } from 'preact/hooks';
import type { Webhook } from '../api/client';
import { outcome } from '../api/outcome';
import { appPath, navigate } from '../router/router';
import { useApi } from '../session/session';
import { ConfirmButton } from '../ui/ConfirmButton';
import { FormError } from '../ui/States';

interface ActionsProps {
  hook: Webhook;
  /** the hook changed (enabled or disabled): read it again */
  onChanged: () => void;
  /** a delivery was queued (the test event): read the log again */
  onQueued: (message: string) => void;
  /** a new secret, to show once */
  onRotated: (secret: string) => void;
}

/** Rotating takes a second click: the receiver must learn the new secret within the 24 hours the old one still signs. */
function RotateSecret({
  id,
  onRotated,
  onProblem,
}: {
  id: number;
  onRotated: (s: string) => void;
  onProblem: (m: string) => void;
}) {
  const api = useApi();
  const [asking, setAsking] = useState(false);
  const rotate = async () => {
    const res = await outcome(api.POST('/api/v1/webhooks/{id}/rotate-secret', { params: { path: { id } } }));
    setAsking(false);
    if (res.ok) onRotated(res.data.secret);
    else onProblem(res.problem.message);
  };
  if (!asking)
    return (
      <button type="button" class="secondary" onClick={() => setAsking(true)}>
        Rotate the secret
      </button>
    );
  return (
    <span class="confirm-rotate">
      <span>The current secret keeps signing beside the new one for 24 hours.</span>{' '}
      <button type="button" onClick={() => void rotate()}>
        Rotate now
      </button>{' '}
      <button type="button" class="link-button" onClick={() => setAsking(false)}>
        Keep the secret
      </button>
    </span>
  );
}

/** What can be done to a hook: turn it off or on, send the test event, rotate its secret, delete it. */
export function WebhookActions({ hook, onChanged, onQueued, onRotated }: ActionsProps) {
  const api = useApi();
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const path = { params: { path: { id: hook.id } } };
  const toggle = async () => {
    setBusy(true);
    const res = await outcome(api.PATCH('/api/v1/webhooks/{id}', { ...path, body: { enabled: !hook.enabled } }));
    setBusy(false);
    setProblem(res.ok ? null : res.problem.message);
    onChanged();
  };
  const test = async () => {
    setBusy(true);
    const res = await outcome(api.POST('/api/v1/webhooks/{id}/test', path));
    setBusy(false);
    setProblem(res.ok ? null : res.problem.message);
    if (res.ok) onQueued(`A test event (${res.data.event_id}) is on its way.`);
  };
  return (
    <div class="hook-actions">
      <FormError message={problem} />
      <p class="row">
        <button type="button" disabled={busy || !hook.enabled} onClick={() => void test()}>
          Send a test event
        </button>
        <button type="button" class="secondary" disabled={busy} onClick={() => void toggle()}>
          {hook.enabled ? 'Disable' : 'Enable'}
        </button>
        <RotateSecret id={hook.id} onRotated={onRotated} onProblem={setProblem} />
        <ConfirmButton
          verb="Delete"
          label={`the webhook to ${hook.url}`}
          act={() => outcome(api.DELETE('/api/v1/webhooks/{id}', path))}
          onDone={() => navigate(appPath('/webhooks'))}
        />
      </p>
    </div>
  );
}
