import type { TargetedSubmitEvent } from 'preact';
import { useState } from 'preact/hooks';
import { outcome, type Outcome } from '../../api/outcome';
import { formMessage, type Problem } from '../../api/problem';
import { useApiData } from '../../api/use-api-data';
import { Link } from '../../router/Link';
import { appPath } from '../../router/router';
import { useApi } from '../../session/session';
import { ErrorState, FormError, Loading } from '../../ui/States';
import { useTitle } from '../../ui/use-title';
import { DryRun } from './DryRun';
import { RuleCard } from './RuleCard';
import {
  draftOf,
  moved,
  newRule,
  removed,
  replaced,
  rulesBody,
  unbalancedSplits,
  type Rule,
  type RuleDraft,
} from './rule-drafts';

interface Loaded {
  rules: Rule[];
  /** the GET's ETag: the PUT goes with If-Match, so rules changed elsewhere meanwhile are not overwritten */
  etag: string | null;
}

/**
 * A link's rules (SPEC §21): GET /links/{code}/rules, edited as a whole and saved with PUT and If-Match; the
 * first enabled rule that matches a visit wins, so their order is theirs to set. The dry run asks the server
 * which rule a described visit would meet, recording nothing.
 */
export default function RulesPage({ code }: { code: string }) {
  useTitle(`Rules of ${code}`);
  const api = useApi();
  const loaded = useApiData(async (): Promise<Outcome<Loaded>> => {
    const got = await outcome(api.GET('/api/v1/links/{code}/rules', { params: { path: { code } }, cache: 'no-store' }));
    if (!got.ok) return got;
    return {
      ok: true,
      data: { rules: got.data.rules, etag: got.response.headers.get('etag') },
      response: got.response,
    };
  }, [code]);
  return (
    <>
      <h1>
        Rules of <span class="code">{code}</span>
      </h1>
      <p class="muted">
        A visit goes to the first rule that is on and whose conditions all match; otherwise to the link's destination.
      </p>
      {loaded.state === 'loading' && <Loading what="the rules" />}
      {loaded.state === 'error' && <ErrorState problem={loaded.problem} onRetry={loaded.reload} />}
      {loaded.state === 'ready' && (
        <RulesForm key={loaded.data.etag ?? ''} code={code} loaded={loaded.data} onReload={loaded.reload} />
      )}
      {loaded.state === 'ready' && <DryRun code={code} />}
    </>
  );
}

/**
 * The editor's rules and their saving: the PUT with If-Match, the stored list back (with the ids Ferry gave),
 * and a split whose weights do not sum to 100 stopped before it is sent.
 */
function useRulesEditor(code: string, loaded: Loaded) {
  const api = useApi();
  const [etag, setEtag] = useState(loaded.etag);
  const [drafts, setDrafts] = useState<RuleDraft[]>(() => loaded.rules.map(draftOf));
  const [problem, setProblem] = useState<Problem | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const change = (next: RuleDraft[]) => {
    setSaved(false);
    setDrafts(next);
  };

  const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    const unbalanced = unbalancedSplits(drafts);
    if (unbalanced.length > 0) {
      setNote(`The split weights of rule ${unbalanced.join(', ')} must sum to 100; nothing was saved.`);
      return;
    }
    setNote(null);
    setBusy(true);
    const put = await outcome(
      api.PUT('/api/v1/links/{code}/rules', {
        params: { path: { code } },
        body: rulesBody(drafts),
        ...(etag ? { headers: { 'if-match': etag } } : {}),
      }),
    );
    setBusy(false);
    if (!put.ok) return setProblem(put.problem);
    setProblem(null);
    setEtag(put.response.headers.get('etag'));
    setDrafts(put.data.rules.map(draftOf));
    setSaved(true);
  };

  return { drafts, change, submit, problem, note, saved, busy };
}

function RulesForm({ code, loaded, onReload }: { code: string; loaded: Loaded; onReload: () => void }) {
  const { drafts, change, submit, problem, note, saved, busy } = useRulesEditor(code, loaded);
  const stale = problem?.status === 412;
  return (
    <form onSubmit={submit} noValidate class="rules-form">
      {stale ? <StaleRules onReload={onReload} /> : <FormError message={note ?? formMessage(problem, ['rules'])} />}
      {drafts.length === 0 && <p class="muted">This link has no rules: every visit goes to its destination.</p>}
      {drafts.map((d, i) => (
        <RuleCard
          key={d.id ?? `new-${i}`}
          rule={d}
          index={i}
          count={drafts.length}
          problem={stale ? null : problem}
          onChange={(next) => change(replaced(drafts, i, next))}
          onMove={(by) => change(moved(drafts, i, by))}
          onRemove={() => change(removed(drafts, i))}
        />
      ))}
      <p class="row">
        {drafts.length < 20 && (
          <button type="button" onClick={() => change([...drafts, newRule()])}>
            Add a rule
          </button>
        )}
        <button type="submit" disabled={busy}>
          Save rules
        </button>
        <Link href={appPath(`/links/${encodeURIComponent(code)}/edit`)}>Back to the link</Link>
      </p>
      <p role="status" class="notice" hidden={!saved}>
        {saved ? 'Rules saved.' : ''}
      </p>
    </form>
  );
}

/** A 412: the rules changed elsewhere since the editor read them; nothing was saved. */
function StaleRules({ onReload }: { onReload: () => void }) {
  return (
    <div class="form-error" role="alert">
      <p>These rules were changed elsewhere since you opened them, so yours were not saved.</p>
      <button type="button" onClick={onReload}>
        Reload the rules
      </button>
    </div>
  );
}
