import type { TargetedSubmitEvent } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { outcome } from '../api/outcome';
import { formMessage, type Problem } from '../api/problem';
import { Link } from '../router/Link';
import { appPath, navigate } from '../router/router';
import { Field } from '../ui/Field';
import { FormError } from '../ui/States';
import { useFocusFirstInvalid } from '../ui/use-focus-first-invalid';
import { useTitle } from '../ui/use-title';
import { useApi } from './session';
import { useInstance } from './use-instance';

const FIELDS = ['username', 'email', 'password'] as const;

/** What becomes of a new account, as REGISTRATION decides (GET /instance). */
const REGISTRATION = {
  approval: 'New accounts are activated by an admin.',
  open: 'New accounts can be used at once.',
  closed: 'Sign-ups are closed on this instance: an admin creates accounts.',
} as const;

type SignUpForm = Record<(typeof FIELDS)[number], string>;

/** The account's fields, each with its rule and its error. */
function SignUpFields(props: {
  form: SignUpForm;
  problem: Problem | null;
  set: (field: (typeof FIELDS)[number]) => (e: { currentTarget: HTMLInputElement }) => void;
}) {
  const { form, problem, set } = props;
  return (
    <>
      <Field label="Username" hint="3 to 32 of letters, digits, . _ -" error={problem?.fields.username}>
        {(a) => (
          <input
            {...a}
            name="username"
            autocomplete="username"
            required
            value={form.username}
            onInput={set('username')}
          />
        )}
      </Field>
      <Field label="Email" error={problem?.fields.email}>
        {(a) => (
          <input
            {...a}
            name="email"
            type="email"
            autocomplete="email"
            required
            value={form.email}
            onInput={set('email')}
          />
        )}
      </Field>
      <Field label="Password" hint="8 to 128 characters" error={problem?.fields.password}>
        {(a) => (
          <input
            {...a}
            name="password"
            type="password"
            autocomplete="new-password"
            required
            value={form.password}
            onInput={set('password')}
          />
        )}
      </Field>
    </>
  );
}

/** Sign up (POST /users): the screen says what becomes of the account (pending until an admin activates it, by default). */
export function SignUpPage() {
  useTitle('Sign up');
  const instance = useInstance();
  const api = useApi();
  const [form, setForm] = useState({ username: '', email: '', password: '' });
  const [problem, setProblem] = useState<Problem | null>(null);
  const formRef = useRef<HTMLFormElement>(null);
  useFocusFirstInvalid(formRef, problem);
  const [busy, setBusy] = useState(false);
  const set = (field: (typeof FIELDS)[number]) => (e: { currentTarget: HTMLInputElement }) =>
    setForm({ ...form, [field]: e.currentTarget.value });

  const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    const created = await outcome(api.POST('/api/v1/users', { body: form }));
    setBusy(false);
    if (created.ok) navigate(`${appPath('/sign-in')}?signed-up=1`);
    else setProblem(created.problem);
  };

  return (
    <main class="narrow" id="main">
      <h1>Sign up</h1>
      <p>{REGISTRATION[instance?.registration ?? 'approval']}</p>
      {instance?.registration !== 'closed' && (
        <form ref={formRef} onSubmit={submit} noValidate>
          <FormError message={formMessage(problem, FIELDS)} />
          <SignUpFields form={form} problem={problem} set={set} />
          <button type="submit" disabled={busy}>
            Sign up
          </button>
        </form>
      )}
      <p>
        Already have an account? <Link href={appPath('/sign-in')}>Sign in</Link>
      </p>
    </main>
  );
}
