import type { TargetedSubmitEvent } from 'preact';
import { useState } from 'preact/hooks';
import { outcome } from '../api/outcome';
import type { Problem } from '../api/problem';
import { useApiData } from '../api/use-api-data';
import { useApi } from '../session/session';
import { Field } from '../ui/Field';
import { ErrorState, FormError, Loading } from '../ui/States';
import { useTitle } from '../ui/use-title';

interface Setup {
  secret: string;
  otpauth_url: string;
  qr_svg: string;
}

/** One code field and its button: confirming the set-up, or turning it off. */
function CodeForm(props: { label: string; button: string; onCode: (code: string) => Promise<Problem | null> }) {
  const [code, setCode] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    setProblem(await props.onCode(code));
    setBusy(false);
  };
  return (
    <form onSubmit={submit} noValidate>
      <FormError message={problem && !problem.fields.code ? problem.message : null} />
      <Field label={props.label} error={problem?.fields.code}>
        {(a) => (
          <input
            {...a}
            name="code"
            autocomplete="one-time-code"
            required
            value={code}
            onInput={(e) => setCode(e.currentTarget.value.trim())}
          />
        )}
      </Field>
      <button type="submit" disabled={busy}>
        {props.button}
      </button>
    </form>
  );
}

/** The recovery codes, shown once after turning two-factor sign-in on. */
function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  return (
    <section class="notice" aria-labelledby="recovery-codes">
      <h2 id="recovery-codes">Your recovery codes</h2>
      <p>Each works once in place of a code from your app. Keep them somewhere safe now: they are not shown again.</p>
      <ul class="recovery-codes" data-testid="recovery-codes">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <button type="button" onClick={onDone}>
        I have saved them
      </button>
    </section>
  );
}

function TwoFactorOn({ left, onCode }: { left: number; onCode: (code: string) => Promise<Problem | null> }) {
  return (
    <>
      <p role="status">
        Two-factor sign-in is on. {left} recovery code{left === 1 ? '' : 's'} left.
      </p>
      <CodeForm label="Code to turn it off" button="Turn off two-factor sign-in" onCode={onCode} />
    </>
  );
}

/**
 * The API's SVG as an image's data: URL (CSP img-src allows data:). Never as markup: the dashboard's Trusted Types
 * policy refuses every string as HTML (innerHTML throws), and an SVG inside an <img> cannot run anything.
 */
const svgDataUrl = (svg: string): string => `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;

/** The new key as a QR code (the API's SVG) and as text, and the code that confirms it. */
function TwoFactorSetup({ setup, onCode }: { setup: Setup; onCode: (code: string) => Promise<Problem | null> }) {
  return (
    <>
      <p>Scan this code with your authenticator app, or type the key into it; then enter the code it shows.</p>
      <p class="qr">
        <img src={svgDataUrl(setup.qr_svg)} alt="QR code of the key" />
      </p>
      <p>
        Key: <code data-testid="totp-secret">{setup.secret}</code>
      </p>
      <CodeForm label="Code from your app" button="Turn on" onCode={onCode} />
    </>
  );
}

/**
 * Security (SPEC §23): two-factor sign-in — set it up with the QR code, confirm with a code, the recovery codes
 * once, turn it off. An admin whom TOTP_REQUIRED_FOR_ADMINS stops is sent here.
 */
export function SecurityPage() {
  useTitle('Security');
  const api = useApi();
  const state = useApiData(() => outcome(api.GET('/api/v1/users/me/totp')), []);
  const [setup, setSetup] = useState<Setup | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);

  const start = async () => {
    const res = await outcome(api.POST('/api/v1/users/me/totp'));
    if (res.ok) setSetup(res.data);
    setProblem(res.ok ? null : res.problem);
  };
  const confirm = async (code: string) => {
    const res = await outcome(api.POST('/api/v1/users/me/totp/confirm', { body: { code } }));
    if (!res.ok) return res.problem;
    setSetup(null);
    setCodes(res.data.recovery_codes);
    state.reload();
    return null;
  };
  const turnOff = async (code: string) => {
    const res = await outcome(api.DELETE('/api/v1/users/me/totp', { body: { code } }));
    if (!res.ok) return res.problem;
    state.reload();
    return null;
  };

  if (state.state === 'loading') return <Loading what="your sign-in settings" />;
  if (state.state === 'error') return <ErrorState problem={state.problem} onRetry={state.reload} />;
  const { enabled, recovery_codes_left } = state.data;
  return (
    <>
      <h1>Security</h1>
      <h2>Two-factor sign-in</h2>
      {codes && <RecoveryCodes codes={codes} onDone={() => setCodes(null)} />}
      {enabled ? (
        <TwoFactorOn left={recovery_codes_left} onCode={turnOff} />
      ) : setup ? (
        <TwoFactorSetup setup={setup} onCode={confirm} />
      ) : (
        <>
          <p>Off: signing in takes your password only. With it on, it also takes a code from an app on your phone.</p>
          <FormError message={problem?.message ?? null} />
          <button type="button" onClick={() => void start()}>
            Set up two-factor sign-in
          </button>
        </>
      )}
    </>
  );
}
