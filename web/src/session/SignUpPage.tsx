import type { TargetedSubmitEvent } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { outcome } from '../api/outcome';
import { otherFieldMessages, type Problem } from '../api/problem';
import { Link } from '../router/Link';
import { appPath, navigate } from '../router/router';
import { Field } from '../ui/Field';
import { FormError } from '../ui/States';
import { useFocusFirstInvalid } from '../ui/use-focus-first-invalid';
import { useTitle } from '../ui/use-title';
import { useApi } from './session';

const FIELDS = ['username', 'email', 'password'] as const;

/** Sign up (POST /users): a new account is pending until an admin activates it, and the screen says so. */
export function SignUpPage() {
  useTitle('Sign up');
  const api = useApi();
  const [form, setForm] = useState({ username: '', email: '', password: '' });
  const [problem, setProblem] = useState<Problem | null>(null);
  const formRef = useRef<HTMLFormElement>(null);
  useFocusFirstInvalid(formRef, problem);
  const [busy, setBusy] = useState(false);
  const set = (field: (typeof FIELDS)[number]) => (e: { currentTarget: HTMLInputElement }) => setForm({ ...form, [field]: e.currentTarget.value });

  const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    const created = await outcome(api.POST('/api/v1/users', { body: form }));
    setBusy(false);
    if (created.ok) navigate(`${appPath('/sign-in')}?signed-up=1`);
    else setProblem(created.problem);
  };

  const others = problem ? otherFieldMessages(problem, FIELDS) : [];
  return (
    <main class="narrow" id="main">
      <h1>Sign up</h1>
      <p>New accounts are activated by an admin.</p>
      <form ref={formRef} onSubmit={submit} noValidate>
        <FormError message={problem ? [problem.message, ...others].join('. ') : null} />
        <Field label="Username" hint="3 to 32 of letters, digits, . _ -" error={problem?.fields.username}>
          {(a) => <input {...a} name="username" autocomplete="username" required value={form.username} onInput={set('username')} />}
        </Field>
        <Field label="Email" error={problem?.fields.email}>
          {(a) => <input {...a} name="email" type="email" autocomplete="email" required value={form.email} onInput={set('email')} />}
        </Field>
        <Field label="Password" hint="8 to 128 characters" error={problem?.fields.password}>
          {(a) => <input {...a} name="password" type="password" autocomplete="new-password" required value={form.password} onInput={set('password')} />}
        </Field>
        <button type="submit" disabled={busy}>
          Sign up
        </button>
      </form>
      <p>
        Already have an account? <Link href={appPath('/sign-in')}>Sign in</Link>
      </p>
    </main>
  );
}
