import type { TargetedSubmitEvent } from 'preact';
import { useRef, useState } from 'preact/hooks';
import type { ApiKeyCreated, Scope } from '../api/client';
import { outcome } from '../api/outcome';
import { fieldMessage, formMessage, type Problem } from '../api/problem';
import { instantFromLocalInput } from '../links/local-time';
import { useApi } from '../session/session';
import { Field } from '../ui/Field';
import { FormError } from '../ui/States';
import { useFocusFirstInvalid } from '../ui/use-focus-first-invalid';
import { SCOPE_LABELS, SCOPES } from './scopes';

const FIELDS = ['name', 'scopes', 'expires_at'];

/** The new key's fields, and its POST: the fields are cleared once the key is created. */
function useApiKeyCreation(onCreated: (key: ApiKeyCreated) => void) {
  const api = useApi();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [expires, setExpires] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  useFocusFirstInvalid(form, problem);
  const toggle = (scope: Scope, on: boolean) =>
    setScopes(on ? SCOPES.filter((s) => s === scope || scopes.includes(s)) : scopes.filter((s) => s !== scope));

  const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    const body = { name: name.trim(), scopes, ...(expires ? { expires_at: instantFromLocalInput(expires) } : {}) };
    const created = await outcome(api.POST('/api/v1/users/{id}/api-keys', { params: { path: { id: 'me' } }, body }));
    setBusy(false);
    if (!created.ok) return setProblem(created.problem);
    setProblem(null);
    setName('');
    setScopes([]);
    setExpires('');
    onCreated(created.data);
  };

  return { name, setName, scopes, toggle, expires, setExpires, problem, busy, form, submit };
}

/** The key's scopes, one checkbox each, with the API's message for them. */
function ScopesField(props: {
  scopes: Scope[];
  toggle: (scope: Scope, on: boolean) => void;
  error: string | undefined;
}) {
  const { scopes, toggle, error } = props;
  return (
    <fieldset class={error ? 'scopes field-invalid' : 'scopes'} aria-describedby={error ? 'scopes-error' : undefined}>
      <legend>Scopes</legend>
      {SCOPES.map((scope) => (
        <label class="check" key={scope}>
          <input
            type="checkbox"
            name="scopes"
            value={scope}
            checked={scopes.includes(scope)}
            aria-invalid={Boolean(error)}
            onChange={(e) => toggle(scope, e.currentTarget.checked)}
          />
          <span>
            <code>{scope}</code> {SCOPE_LABELS[scope]}
          </span>
        </label>
      ))}
      {error && (
        <p class="field-error" id="scopes-error">
          {error}
        </p>
      )}
    </fieldset>
  );
}

/** Create an API key (POST /users/me/api-keys): a name, its scopes, an optional expiry. */
export function ApiKeyForm({ onCreated }: { onCreated: (key: ApiKeyCreated) => void }) {
  const { name, setName, scopes, toggle, expires, setExpires, problem, busy, form, submit } =
    useApiKeyCreation(onCreated);

  return (
    <form ref={form} onSubmit={submit} noValidate class="link-form" aria-labelledby="new-key-title">
      <h2 id="new-key-title">Create an API key</h2>
      <FormError message={formMessage(problem, FIELDS)} />
      <Field label="Key name" hint="1 to 64 characters, to tell your keys apart" error={fieldMessage(problem, 'name')}>
        {(a) => (
          <input
            {...a}
            name="name"
            autocomplete="off"
            required
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        )}
      </Field>
      <ScopesField scopes={scopes} toggle={toggle} error={fieldMessage(problem, 'scopes')} />
      <Field
        label="Expires (optional)"
        hint="In your time zone; leave empty for a key that does not expire"
        error={fieldMessage(problem, 'expires_at')}
      >
        {(a) => (
          <input
            {...a}
            name="expires_at"
            type="datetime-local"
            value={expires}
            onInput={(e) => setExpires(e.currentTarget.value)}
          />
        )}
      </Field>
      <button type="submit" disabled={busy}>
        Create key
      </button>
    </form>
  );
}
