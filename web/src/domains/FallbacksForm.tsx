import type { TargetedSubmitEvent } from 'preact';
import { useState } from 'preact/hooks';
import type { Domain } from '../api/client';
import { outcome } from '../api/outcome';
import { fieldMessage, formMessage, type Problem } from '../api/problem';
import { useApi } from '../session/session';
import { Field } from '../ui/Field';
import { FormError } from '../ui/States';

const FALLBACKS = [
  ['root_redirect', 'Home page (optional)', 'Where the bare domain sends visitors'],
  ['not_found_redirect', 'Unknown code (optional)', 'Instead of "not found"'],
  ['expired_redirect', 'Expired link (optional)', 'Instead of "expired" or "used up"'],
] as const;
type Fallback = (typeof FALLBACKS)[number][0];

/** PATCH /domains/{id}: the three fallbacks (an empty field clears one). */
export function FallbacksForm({ domain, onSaved }: { domain: Domain; onSaved: () => void }) {
  const api = useApi();
  const [values, setValues] = useState<Record<Fallback, string>>({
    root_redirect: domain.root_redirect ?? '',
    not_found_redirect: domain.not_found_redirect ?? '',
    expired_redirect: domain.expired_redirect ?? '',
  });
  const [problem, setProblem] = useState<Problem | null>(null);
  const [saved, setSaved] = useState(false);
  const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    const body = Object.fromEntries(FALLBACKS.map(([f]) => [f, values[f].trim() || null]));
    const res = await outcome(api.PATCH('/api/v1/domains/{id}', { params: { path: { id: domain.id } }, body }));
    if (!res.ok) return setProblem(res.problem);
    setProblem(null);
    setSaved(true);
    onSaved();
  };
  return (
    <form onSubmit={submit} noValidate class="fallbacks" aria-label={`Fallbacks of ${domain.hostname}`}>
      <FormError
        message={formMessage(
          problem,
          FALLBACKS.map(([f]) => f),
        )}
      />
      {FALLBACKS.map(([field, label, hint]) => (
        <Field key={field} label={label} hint={hint} error={fieldMessage(problem, field)}>
          {(a) => (
            <input
              {...a}
              name={field}
              type="url"
              value={values[field]}
              onInput={(e) => setValues({ ...values, [field]: e.currentTarget.value })}
            />
          )}
        </Field>
      ))}
      <button type="submit">Save fallbacks</button>
      <p class="visually-hidden" role="status" aria-live="polite">
        {saved ? 'Fallbacks saved.' : ''}
      </p>
    </form>
  );
}
