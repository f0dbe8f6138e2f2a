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
import { EMPTY_PREVIEW, PREVIEW_FIELDS, PreviewFields, previewBody, type PreviewValues } from './PreviewFields';

/**
 * The new-link form (SPEC §16: the target's field is labelled Destination URL, the button Create link). The
 * API decides what is valid; its messages appear beside their fields. One Idempotency-Key per distinct
 * submission: sending the same form again after a lost answer replays the link created the first time
 * instead of creating a second one.
 */
export function LinkForm({ onCreated }: { onCreated: (link: ShortLink) => void }) {
  const api = useApi();
  const [values, setValues] = useState<LinkValues>(EMPTY_LINK_VALUES);
  const [preview, setPreview] = useState<PreviewValues>(EMPTY_PREVIEW);
  const [problem, setProblem] = useState<Problem | null>(null);
  const form = useRef<HTMLFormElement>(null);
  useFocusFirstInvalid(form, problem);
  const [busy, setBusy] = useState(false);
  const idempotencyKey = useRef(newIdempotencyKey());
  const change =
    <T,>(set: (next: T) => void) =>
    (next: T) => {
      idempotencyKey.current = newIdempotencyKey();
      set(next);
    };
  const card = previewBody(preview);

  const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    const created = await outcome(
      api.POST('/api/v1/links', {
        body: { ...createBody(values), ...(card ? { preview: card } : {}) },
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
      <FormError message={formMessage(problem, [...LINK_FIELDS, ...PREVIEW_FIELDS])} />
      <LinkFields values={values} onChange={change(setValues)} problem={problem} />
      <PreviewFields
        values={preview}
        onChange={change(setPreview)}
        problem={problem}
        shortUrl={`${values.domain || window.location.host}/…`}
      />
      <button type="submit" disabled={busy}>
        Create link
      </button>
    </form>
  );
}
