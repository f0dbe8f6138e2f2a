import type { TargetedSubmitEvent } from 'preact';
import { useRef, useState } from 'preact/hooks';
import type { Link as ShortLink } from '../api/client';
import { newIdempotencyKey } from '../api/idempotency-key';
import { outcome } from '../api/outcome';
import { formMessage, type Problem } from '../api/problem';
import { useApi } from '../session/session';
import { FormError } from '../ui/States';
import { useFocusFirstInvalid } from '../ui/use-focus-first-invalid';
import { LINK_FIELDS, LinkFields } from './LinkFields';
import { createBody, EMPTY_LINK_VALUES, type LinkValues } from './link-values';

/**
 * The new-link form (SPEC §16: the target's field is labelled Destination URL, the button Create link). The
 * API decides what is valid; its messages appear beside their fields. One Idempotency-Key per distinct
 * submission: sending the same form again after a lost answer replays the link created the first time
 * instead of creating a second one.
 */
export function LinkForm({ onCreated }: { onCreated: (link: ShortLink) => void }) {
  const api = useApi();
  const [values, setValues] = useState<LinkValues>(EMPTY_LINK_VALUES);
  const [problem, setProblem] = useState<Problem | null>(null);
  const form = useRef<HTMLFormElement>(null);
  useFocusFirstInvalid(form, problem);
  const [busy, setBusy] = useState(false);
  const idempotencyKey = useRef(newIdempotencyKey());
  const change = (next: LinkValues) => {
    idempotencyKey.current = newIdempotencyKey();
    setValues(next);
  };

  const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    const created = await outcome(
      api.POST('/api/v1/links', {
        body: createBody(values),
        params: { header: { 'idempotency-key': idempotencyKey.current } },
      }),
    );
    setBusy(false);
    if (!created.ok) return setProblem(created.problem);
    setProblem(null);
    onCreated(created.data);
  };

  return (
    <form ref={form} onSubmit={submit} noValidate class="link-form">
      <FormError message={formMessage(problem, LINK_FIELDS)} />
      <LinkFields values={values} onChange={change} problem={problem} />
      <button type="submit" disabled={busy}>
        Create link
      </button>
    </form>
  );
}
