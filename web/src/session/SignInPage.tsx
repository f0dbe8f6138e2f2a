import type { TargetedSubmitEvent } from 'preact';
import { useRef, useState } from 'preact/hooks';
import type { Problem } from '../api/problem';
import { Link } from '../router/Link';
import { appPath, useLocation } from '../router/router';
import { Field } from '../ui/Field';
import { FormError } from '../ui/States';
import { useFocusFirstInvalid } from '../ui/use-focus-first-invalid';
import { useTitle } from '../ui/use-title';
import { useSession, type SignInReason } from './session';

const REASONS: Record<SignInReason, string> = {
  'signed-out': 'You have signed out.',
  expired: 'Your session has ended. Sign in again to continue.',
  'revoke-failed': 'You have signed out here, but the server could not be told: the old token stays valid until it expires.',
};

/** Sign in (SPEC §16: fields labelled Username and Password, button Sign in); then back where the user was. */
export function SignInPage() {
  useTitle('Sign in');
  const session = useSession();
  const location = useLocation();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const form = useRef<HTMLFormElement>(null);
  useFocusFirstInvalid(form, problem);
  const [busy, setBusy] = useState(false);

  const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    // Once signed in, App leaves this screen for `next` (safeReturnPath); only a failure stays here.
    const failed = await session.signIn(username, password);
    setBusy(false);
    setProblem(failed);
  };

  const message = problem?.status === 401 ? 'Wrong username or password.' : (problem?.message ?? null);
  return (
    <main class="narrow" id="main">
      <h1>Sign in</h1>
      {session.ended && !problem && <p class="notice" role="status">{REASONS[session.ended]}</p>}
      {location.query.get('signed-up') && !problem && (
        <p class="notice" role="status">
          Your account was created. It awaits activation by an admin; you can sign in meanwhile.
        </p>
      )}
      <form ref={form} onSubmit={submit} noValidate>
        <FormError message={message} />
        <Field label="Username" error={problem?.fields.username}>
          {(a) => <input {...a} name="username" autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />}
        </Field>
        <Field label="Password" error={problem?.fields.password}>
          {(a) => (
            <input {...a} name="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
          )}
        </Field>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p>
        No account yet? <Link href={appPath('/sign-up')}>Sign up</Link>
      </p>
    </main>
  );
}
