import type { TargetedSubmitEvent } from 'preact';
import { useRef, useState } from 'preact/hooks';
import type { Link as ShortLink } from '../api/client';
import { outcome, type Outcome } from '../api/outcome';
import { formMessage, type Problem } from '../api/problem';
import { useApiData } from '../api/use-api-data';
import { Link } from '../router/Link';
import { appPath } from '../router/router';
import { useApi } from '../session/session';
import { ErrorState, FormError, Loading } from '../ui/States';
import { useFocusFirstInvalid } from '../ui/use-focus-first-invalid';
import { useTitle } from '../ui/use-title';
import { LINK_FIELDS, LinkFields } from './LinkFields';
import { patchBody, valuesFromLink, type LinkValues } from './link-values';
import {
  PREVIEW_FIELDS,
  PreviewFields,
  previewPatch,
  previewValuesFromLink,
  type PreviewValues,
} from './PreviewFields';

interface Loaded {
  link: ShortLink;
  /** the GET's ETag: the PATCH goes with If-Match, so a change made elsewhere meanwhile is not overwritten */
  etag: string | null;
}

/** Edit a link (GET /links/{code}, then PATCH with If-Match from its ETag; SPEC §13). */
export function EditLinkPage({ code }: { code: string }) {
  useTitle(`Edit ${code}`);
  const api = useApi();
  const loaded = useApiData(async (): Promise<Outcome<Loaded>> => {
    // no-store: the ETag must be the server's current one, not a cached answer's.
    const got = await outcome(api.GET('/api/v1/links/{code}', { params: { path: { code } }, cache: 'no-store' }));
    if (!got.ok) return got;
    return { ok: true, data: { link: got.data, etag: got.response.headers.get('etag') }, response: got.response };
  }, [code]);
  return (
    <>
      <h1>
        Edit <span class="code">{code}</span>
      </h1>
      {loaded.state === 'loading' && <Loading what="the link" />}
      {loaded.state === 'error' && <ErrorState problem={loaded.problem} onRetry={loaded.reload} />}
      {loaded.state === 'ready' && <LinkHealthLine link={loaded.data.link} />}
      {loaded.state === 'ready' && (
        <EditLinkForm key={loaded.data.etag ?? ''} loaded={loaded.data} onReload={loaded.reload} />
      )}
    </>
  );
}

/** SPEC §24: what the last check of the destination found (status, HTTP status, error), when there was one. */
function LinkHealthLine({ link }: { link: ShortLink }) {
  const { status, checked_at, http_status, error } = link.health;
  return (
    <p class={status === 'broken' ? 'health health-broken' : 'health'} role="status">
      Destination: <strong>{status}</strong>
      {checked_at ? ` — last checked ${new Date(checked_at).toLocaleString()}` : ' — not checked yet'}
      {http_status !== null ? `, HTTP ${http_status}` : ''}
      {error ? `: ${error}` : ''}
    </p>
  );
}

/** An input's change: the form's values change and it is no longer "saved". */
const edited =
  <T,>(setSaved: (saved: boolean) => void, set: (values: T) => void) =>
  (next: T) => {
    setSaved(false);
    set(next);
  };

function EditLinkForm({ loaded, onReload }: { loaded: Loaded; onReload: () => void }) {
  const api = useApi();
  const [current, setCurrent] = useState(loaded);
  const [values, setValues] = useState<LinkValues>(() => valuesFromLink(loaded.link));
  const [preview, setPreview] = useState<PreviewValues>(() => previewValuesFromLink(loaded.link));
  const [problem, setProblem] = useState<Problem | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  useFocusFirstInvalid(form, problem);

  const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    const body = withPreview(patchBody(current.link, values), previewPatch(current.link, preview));
    setBusy(true);
    const patched = await outcome(
      api.PATCH('/api/v1/links/{code}', {
        params: { path: { code: current.link.short_code } },
        body,
        ...(current.etag ? { headers: { 'if-match': current.etag } } : {}),
      }),
    );
    setBusy(false);
    if (!patched.ok) return setProblem(patched.problem);
    setProblem(null);
    setCurrent({ link: patched.data, etag: patched.response.headers.get('etag') });
    setValues(valuesFromLink(patched.data));
    setPreview(previewValuesFromLink(patched.data));
    setSaved(true);
  };

  const stale = problem?.status === 412;
  const code = encodeURIComponent(current.link.short_code);
  return (
    <form ref={form} onSubmit={submit} noValidate class="link-form">
      {stale ? (
        <StaleNotice onReload={onReload} />
      ) : (
        <FormError message={formMessage(problem, [...LINK_FIELDS, ...PREVIEW_FIELDS])} />
      )}
      <p class="muted">
        <span class="short-url">{current.link.short_url}</span>
      </p>
      <LinkFields
        values={values}
        onChange={edited(setSaved, setValues)}
        problem={stale ? null : problem}
        editing={{ hasPassword: current.link.has_password }}
      />
      <PreviewFields
        values={preview}
        onChange={edited(setSaved, setPreview)}
        problem={stale ? null : problem}
        shortUrl={current.link.short_url}
      />
      <SaveRow busy={busy} saved={saved} code={code} />
    </form>
  );
}

/** The save button, the way on, and the notice that the changes were saved. */
function SaveRow({ busy, saved, code }: { busy: boolean; saved: boolean; code: string }) {
  return (
    <>
      <p class="row">
        <button type="submit" disabled={busy}>
          Save changes
        </button>
        <Link href={appPath(`/links/${code}/stats`)}>Analytics</Link>
        <Link href={appPath(`/links/${code}/rules`)}>Rules</Link>
        <Link href={appPath('/links')}>Back to my links</Link>
      </p>
      <p role="status" class="notice" hidden={!saved}>
        {saved ? 'Changes saved.' : ''}
      </p>
    </>
  );
}

/** The link's patch with the preview's change, when there is one (PreviewFields.tsx). */
const withPreview = <T extends object>(patch: T, preview: ReturnType<typeof previewPatch>) =>
  preview === undefined ? patch : { ...patch, preview };

/** A 412: the link changed elsewhere since the form was filled; nothing was saved. */
function StaleNotice({ onReload }: { onReload: () => void }) {
  return (
    <div class="form-error" role="alert">
      <p>
        This link was changed elsewhere since you opened it, so your changes were not saved. Reload to see the current
        version, then make them again.
      </p>
      <button type="button" onClick={onReload}>
        Reload the link
      </button>
    </div>
  );
}
