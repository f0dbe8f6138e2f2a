import type { TargetedSubmitEvent } from 'preact';
import { useState } from 'preact/hooks';
import type { Link as ShortLink } from '../api/client';
import { outcome } from '../api/outcome';
import { fieldMessage, formMessage, type Problem } from '../api/problem';
import { useApi } from '../session/session';
import { Field } from '../ui/Field';
import { FormError } from '../ui/States';

/** The row's form state, and the PATCH that disables or enables the link (the form closes once it is done). */
function useModeration(link: ShortLink, onChanged: (message: string) => void) {
  const api = useApi();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const code = link.short_code;
  const patch = async (body: { disabled: boolean; disabled_reason?: string | null }, done: string) => {
    setBusy(true);
    const query = link.domain === null ? {} : { domain: link.domain };
    const res = await outcome(api.PATCH('/api/v1/links/{code}', { params: { path: { code }, query }, body }));
    setBusy(false);
    if (!res.ok) return setProblem(res.problem);
    setProblem(null);
    setOpen(false);
    setReason('');
    onChanged(done);
  };
  return { open, setOpen, reason, setReason, problem, busy, patch };
}

/** A disabled link's one action: enable it again. */
function EnableAgain(props: { code: string; busy: boolean; problem: Problem | null; onEnable: () => void }) {
  const { code, busy, problem, onEnable } = props;
  return (
    <span class="moderation">
      <button type="button" class="link-button" disabled={busy} onClick={onEnable} aria-label={`Enable ${code} again`}>
        Enable again
      </button>
      <FormError message={problem?.message ?? null} />
    </span>
  );
}

/**
 * An admin's action on one link (PATCH /links/{code}, SPEC §18): a link that redirects can be disabled, with
 * an optional reason its owner sees (a small form opens in the row); a disabled one can be enabled again.
 */
export function ModerationAction({ link, onChanged }: { link: ShortLink; onChanged: (message: string) => void }) {
  const { open, setOpen, reason, setReason, problem, busy, patch } = useModeration(link, onChanged);
  const code = link.short_code;
  const submit = (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    void patch({ disabled: true, disabled_reason: reason.trim() || null }, `${code} disabled.`);
  };

  if (link.disabled) {
    const enable = () => void patch({ disabled: false }, `${code} enabled again.`);
    return <EnableAgain code={code} busy={busy} problem={problem} onEnable={enable} />;
  }
  if (!open) {
    return (
      <button type="button" class="link-button" onClick={() => setOpen(true)} aria-label={`Disable ${code}`}>
        Disable
      </button>
    );
  }
  return (
    <form class="moderation" onSubmit={submit} noValidate aria-label={`Disable ${code}`}>
      <FormError message={formMessage(problem, ['disabled_reason'])} />
      <Field
        label="Reason (optional)"
        hint="Shown to the link's owner, not to visitors"
        error={fieldMessage(problem, 'disabled_reason')}
      >
        {(a) => (
          <input
            {...a}
            name="disabled_reason"
            maxLength={500}
            autocomplete="off"
            value={reason}
            onInput={(e) => setReason(e.currentTarget.value)}
          />
        )}
      </Field>
      <button type="submit" class="danger" disabled={busy} aria-label={`Confirm: disable ${code}`}>
        Disable link
      </button>
      <button
        type="button"
        class="link-button"
        disabled={busy}
        onClick={() => setOpen(false)}
        aria-label={`Keep ${code} active`}
      >
        Cancel
      </button>
    </form>
  );
}
