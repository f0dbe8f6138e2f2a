import type { TargetedSubmitEvent } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { formMessage, type Problem } from '../api/problem';
import { Link } from '../router/Link';
import { appPath, useLocation } from '../router/router';
import { Field } from '../ui/Field';
import { FormError } from '../ui/States';
import { useFocusFirstInvalid } from '../ui/use-focus-first-invalid';
import { useTitle } from '../ui/use-title';
import { useSession, type SignInReason } from './session';
import { useInstance, type Instance } from './use-instance';

const REASONS: Record<SignInReason, string> = {
  'signed-out': 'You have signed out.',
  expired: 'Your session has ended. Sign in again to continue.',
  'revoke-failed':
    'You have signed out here, but the server could not be told: the old token stays valid until it expires.',
  'sso-failed': 'Single sign-on could not be completed: its sign-in code was already used or has expired. Try again.',
};

/** SPEC §23: when the instance has single sign-on, the way to it (a page of the server, not of the app). */
function SingleSignOn({ instance }: { instance: Instance | null }) {
  if (!instance?.oidc_display_name) return null;
  return (
    <p>
      <a class="button" href="/auth/oidc/login" data-testid="sso">
        Sign in with {instance.oidc_display_name}
      </a>
    </p>
  );
}

/** On a fresh install (no admin yet, SPEC §18 first run): how to make the first admin, as the start-up log says. */
function FirstRunHint({ instance }: { instance: Instance | null }) {
  if (!instance?.first_admin_command) return null;
  return (
    <p class="notice" role="status" data-testid="first-run">
      No admin account exists yet. Create the first one on the server with <code>{instance.first_admin_command}</code>,
      then sign in with it.
    </p>
  );
}

/** After a sign-up: what became of the account, as REGISTRATION decides. */
const SIGNED_UP = {
  open: 'Your account was created. You can sign in now.',
  approval: 'Your account was created. It awaits activation by an admin; you can sign in meanwhile.',
} as const;

/** Above the form, until a sign-in fails: why the session ended, the first-run hint, what a sign-up made. */
function SignInNotices({ instance, failed }: { instance: Instance | null; failed: boolean }) {
  const session = useSession();
  const location = useLocation();
  return (
    <>
      {session.ended && !failed && (
        <p class="notice" role="status">
          {REASONS[session.ended]}
        </p>
      )}
      <FirstRunHint instance={instance} />
      {location.query.get('signed-up') && !failed && (
        <p class="notice" role="status">
          {instance?.registration === 'open' ? SIGNED_UP.open : SIGNED_UP.approval}
        </p>
      )}
    </>
  );
}

/** Below the form: the way to sign up, unless sign-ups are closed. */
function SignUpInvite({ instance }: { instance: Instance | null }) {
  if (instance?.registration === 'closed') return null;
  return (
    <p>
      No account yet? <Link href={appPath('/sign-up')}>Sign up</Link>
    </p>
  );
}

const signInMessage = (problem: Problem | null, needsCode: boolean): string | null =>
  problem?.status === 401
    ? needsCode
      ? 'Wrong username, password or code (each code works once).'
      : 'Wrong username or password.'
    : formMessage(problem, ['username', 'password', 'totp_code']);

/** SPEC §23's second step: the authenticator's code (or a recovery code), asked once the API wants it. */
function CodeStep(props: { code: string; setCode: (c: string) => void; error: string | undefined }) {
  return (
    <>
      <Field label="Authentication code" error={props.error}>
        {(a) => (
          <input
            {...a}
            name="totp_code"
            autocomplete="one-time-code"
            inputMode="numeric"
            required
            autoFocus
            value={props.code}
            onInput={(e) => props.setCode(e.currentTarget.value.trim())}
          />
        )}
      </Field>
      <p class="muted">The six digits your authenticator app shows, or one of your recovery codes.</p>
    </>
  );
}

/**
 * Sign in (SPEC §16: fields labelled Username and Password, button Sign in); then back where the user was. Once
 * signed in, App leaves this screen for `next` (safeReturnPath); only a failure stays here.
 */
export function SignInPage() {
  useTitle('Sign in');
  const session = useSession();
  const instance = useInstance();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [needsCode, setNeedsCode] = useState(false); // SPEC §23: the API answered TOTP_REQUIRED
  const [code, setCode] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  useFocusFirstInvalid(form, problem);
  const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    const failed = await session.signIn(username, password, needsCode ? code : undefined).finally(() => setBusy(false));
    if (failed?.code === 'TOTP_REQUIRED') setNeedsCode(true);
    setProblem(failed?.code === 'TOTP_REQUIRED' ? null : failed);
  };

  return (
    <main class="narrow" id="main">
      <h1>Sign in</h1>
      <SignInNotices instance={instance} failed={problem !== null} />
      <SingleSignOn instance={instance} />
      <form ref={form} onSubmit={submit} noValidate>
        <FormError message={signInMessage(problem, needsCode)} />
        <Field label="Username" error={problem?.fields.username}>
          {(a) => (
            <input
              {...a}
              name="username"
              autocomplete="username"
              required
              value={username}
              onInput={(e) => setUsername(e.currentTarget.value)}
            />
          )}
        </Field>
        <Field label="Password" error={problem?.fields.password}>
          {(a) => (
            <input
              {...a}
              name="password"
              type="password"
              autocomplete="current-password"
              required
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          )}
        </Field>
        {needsCode && <CodeStep code={code} setCode={setCode} error={problem?.fields.totp_code} />}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <SignUpInvite instance={instance} />
    </main>
  );
}
