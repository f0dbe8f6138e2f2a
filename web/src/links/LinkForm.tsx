import type { TargetedSubmitEvent } from 'preact';
import { useRef, useState } from 'preact/hooks';
import type { Link as ShortLink } from '../api/client';
import { newIdempotencyKey } from '../api/idempotency-key';
import { outcome } from '../api/outcome';
import { otherFieldMessages, type Problem } from '../api/problem';
import { useApi } from '../session/session';
import { Field } from '../ui/Field';
import { FormError } from '../ui/States';
import { useFocusFirstInvalid } from '../ui/use-focus-first-invalid';
import { instantFromLocalInput } from './local-time';

const FIELDS = ['original_url', 'short_code', 'expires_at'] as const;
type Values = Record<(typeof FIELDS)[number], string>;

/**
 * The link form (SPEC §16: the target's field is labelled Destination URL, the button Create link). The
 * API decides what is valid; its messages appear beside their fields. One Idempotency-Key per distinct
 * submission: sending the same form again after a lost answer replays the link created the first time
 * instead of creating a second one. Phase 2 adds max visits, password, tags and forward query.
 */
export function LinkForm({ onCreated }: { onCreated: (link: ShortLink) => void }) {
  const api = useApi();
  const [values, setValues] = useState<Values>({ original_url: '', short_code: '', expires_at: '' });
  const [problem, setProblem] = useState<Problem | null>(null);
  const form = useRef<HTMLFormElement>(null);
  useFocusFirstInvalid(form, problem);
  const [busy, setBusy] = useState(false);
  const idempotencyKey = useRef(newIdempotencyKey());
  const set = (field: keyof Values) => (e: { currentTarget: HTMLInputElement }) => {
    idempotencyKey.current = newIdempotencyKey();
    setValues({ ...values, [field]: e.currentTarget.value });
  };

  const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    const body = {
      original_url: values.original_url.trim(),
      ...(values.short_code.trim() ? { short_code: values.short_code.trim() } : {}),
      ...(values.expires_at ? { expires_at: instantFromLocalInput(values.expires_at) } : {}),
    };
    const created = await outcome(api.POST('/api/v1/links', { body, params: { header: { 'idempotency-key': idempotencyKey.current } } }));
    setBusy(false);
    if (!created.ok) return setProblem(created.problem);
    setProblem(null);
    onCreated(created.data);
  };

  const others = problem ? otherFieldMessages(problem, FIELDS) : [];
  return (
    <form ref={form} onSubmit={submit} noValidate class="link-form">
      <FormError message={problem ? [problem.message, ...others].join('. ') : null} />
      <Field label="Destination URL" hint="The http or https address the short link leads to" error={problem?.fields.original_url}>
        {(a) => <input {...a} name="original_url" type="url" inputMode="url" required placeholder="https://example.com/page" value={values.original_url} onInput={set('original_url')} />}
      </Field>
      <Field label="Custom code (optional)" hint="1 to 8 letters or digits; leave empty for a random code" error={problem?.fields.short_code}>
        {(a) => <input {...a} name="short_code" autocomplete="off" autocapitalize="off" spellcheck={false} value={values.short_code} onInput={set('short_code')} />}
      </Field>
      <Field label="Expires (optional)" hint="In your time zone; leave empty to keep the link for good" error={problem?.fields.expires_at}>
        {(a) => <input {...a} name="expires_at" type="datetime-local" value={values.expires_at} onInput={set('expires_at')} />}
      </Field>
      <button type="submit" disabled={busy}>
        Create link
      </button>
    </form>
  );
}
