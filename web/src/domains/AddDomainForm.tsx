import type { TargetedSubmitEvent } from 'preact';
import { useState } from 'preact/hooks';
import { outcome } from '../api/outcome';
import { fieldMessage, formMessage, type Problem } from '../api/problem';
import { useApi } from '../session/session';
import { Field } from '../ui/Field';
import { FormError } from '../ui/States';

/** POST /domains: the host name; the answer says how to verify it (shown by the domain's card). */
export function AddDomainForm({ onAdded }: { onAdded: () => void }) {
  const api = useApi();
  const [hostname, setHostname] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    const added = await outcome(api.POST('/api/v1/domains', { body: { hostname: hostname.trim() } }));
    setBusy(false);
    if (!added.ok) return setProblem(added.problem);
    setProblem(null);
    setHostname('');
    onAdded();
  };
  return (
    <form onSubmit={submit} noValidate class="link-form" aria-labelledby="add-domain-title">
      <h2 id="add-domain-title">Add a domain</h2>
      <FormError message={formMessage(problem, ['hostname'])} />
      <Field label="Host name" hint="For example go.example.com" error={fieldMessage(problem, 'hostname')}>
        {(a) => (
          <input
            {...a}
            name="hostname"
            autocomplete="off"
            autocapitalize="off"
            spellcheck={false}
            required
            value={hostname}
            onInput={(e) => setHostname(e.currentTarget.value)}
          />
        )}
      </Field>
      <button type="submit" disabled={busy}>
        Add domain
      </button>
    </form>
  );
}
