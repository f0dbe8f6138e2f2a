import type { TargetedSubmitEvent } from 'preact';
import { useState } from 'preact/hooks';
import type { paths } from '../../api/openapi';
import { outcome } from '../../api/outcome';
import { formMessage, type Problem } from '../../api/problem';
import { useApi } from '../../session/session';
import { Field } from '../../ui/Field';
import { FormError } from '../../ui/States';

type Evaluation = paths['/api/v1/links/{code}/rules/evaluate']['post']['responses'][200]['content']['application/json'];

const FIELDS = ['user_agent', 'ip', 'country', 'accept_language', 'query', 'referrer', 'at'] as const;
type Visit = Record<(typeof FIELDS)[number], string>;
const LABELS: Record<(typeof FIELDS)[number], [string, string]> = {
  user_agent: ['User agent', 'The browser’s User-Agent header'],
  ip: ['IP address', ''],
  country: ['Country', 'Two letters, such as DE'],
  accept_language: ['Accept-Language', 'Such as de-DE,de;q=0.9'],
  query: ['Query string', 'Such as ref=mail&utm_source=x'],
  referrer: ['Referrer', 'The page the visitor came from'],
  at: ['At', 'ISO 8601; empty: now'],
};

/** `a=1&a=2&b=` → { a: ["1", "2"], b: "" }: the evaluate body's `query`. */
function queryOf(text: string): Record<string, string | string[]> | undefined {
  const params = new URLSearchParams(text.trim().replace(/^\?/, ''));
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const all = params.getAll(key);
    out[key] = all.length === 1 ? all[0]! : all;
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * The dry run (POST /links/{code}/rules/evaluate): a visit described by hand, and where the saved rules would
 * send it, with each rule's verdict and its conditions'. It records no click.
 */
export function DryRun({ code }: { code: string }) {
  const api = useApi();
  const [visit, setVisit] = useState<Visit>(() => Object.fromEntries(FIELDS.map((f) => [f, ''])) as Visit);
  const [result, setResult] = useState<Evaluation | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    const given = Object.fromEntries(
      FIELDS.filter((f) => f !== 'query' && visit[f].trim()).map((f) => [f, visit[f].trim()]),
    );
    const query = queryOf(visit.query);
    const got = await outcome(
      api.POST('/api/v1/links/{code}/rules/evaluate', {
        params: { path: { code } },
        body: { ...given, ...(query ? { query } : {}) },
      }),
    );
    if (!got.ok) {
      setResult(null);
      return setProblem(got.problem);
    }
    setProblem(null);
    setResult(got.data);
  };
  return (
    <section class="dry-run" aria-labelledby="dry-run-title">
      <h2 id="dry-run-title">Try a visit</h2>
      <form onSubmit={submit} noValidate>
        <FormError message={formMessage(problem, [...FIELDS])} />
        {FIELDS.map((f) => (
          <Field key={f} label={LABELS[f][0]} hint={LABELS[f][1] || undefined}>
            {(a) => (
              <input {...a} value={visit[f]} onInput={(e) => setVisit({ ...visit, [f]: e.currentTarget.value })} />
            )}
          </Field>
        ))}
        <button type="submit">Try it</button>
      </form>
      {result && (
        <div role="status" class="dry-run-result">
          <p>
            Goes to <span class="code">{result.url}</span>
            {result.rule_id
              ? ` (rule ${result.rule_id}${result.variant_id ? `, variant ${result.variant_id}` : ''})`
              : ' (no rule matched)'}
          </p>
          <ol>
            {result.trace.map((r) => (
              <li key={r.rule_id}>
                Rule {r.rule_id}: {r.matched ? 'matches' : 'does not match'} —{' '}
                {r.conditions.map((c) => `${c.type} ${c.matched ? '✓' : '✗'}`).join(', ')}
              </li>
            ))}
          </ol>
        </div>
      )}
    </section>
  );
}
