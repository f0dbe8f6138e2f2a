import { useState } from 'preact/hooks';
import type { Domain } from '../api/client';
import { outcome } from '../api/outcome';
import type { Problem } from '../api/problem';
import { useApi } from '../session/session';
import { FormError } from '../ui/States';
import { FallbacksForm } from './FallbacksForm';

const STATUS: Record<Domain['status'], string> = {
  pending: 'Not verified yet: its links serve no visits',
  active: 'Verified',
  failing: 'Verified, but its daily re-check fails (visits are still served)',
  stopped: 'Stopped: its re-checks have failed for 7 days, so it takes no new links',
};

/**
 * One domain, a card: its state, the records that prove it is yours (folded away once it is verified: done, but
 * still there to read while the daily re-check looks for them), Verify or Check again, and apart from them its
 * fallbacks.
 */
export function DomainCard({ domain, onChanged }: { domain: Domain; onChanged: () => void }) {
  const api = useApi();
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const verify = async () => {
    setBusy(true);
    const verified = await outcome(api.POST('/api/v1/domains/{id}/verify', { params: { path: { id: domain.id } } }));
    setBusy(false);
    if (!verified.ok) return setProblem(verified.problem);
    setProblem(null);
    onChanged();
  };
  const v = domain.verification;
  const steps = (
    <dl class="verification">
      <dt>DNS TXT record</dt>
      <dd>
        <code>{v.txt_name}</code> with the value <code>{v.txt_value}</code>
      </dd>
      <dt>Or, on the name's current web server</dt>
      <dd>
        <code>
          http://{domain.hostname}
          {v.http_path}
        </code>{' '}
        answering the last part of that path (pointing the name at Ferry proves nothing by itself)
      </dd>
    </dl>
  );
  return (
    <section class="domain" aria-labelledby={`domain-${domain.id}`}>
      <h3 id={`domain-${domain.id}`}>{domain.hostname}</h3>
      <p class="domain-status">
        {STATUS[domain.status]}
        {domain.status_message ? `: ${domain.status_message}` : ''}
      </p>
      {domain.status === 'active' ? (
        <details class="verification-done">
          <summary>How it was verified</summary>
          {steps}
        </details>
      ) : (
        steps
      )}
      <FormError message={problem ? [problem.message].join('. ') : null} />
      <p class="domain-actions">
        <button type="button" disabled={busy} onClick={() => void verify()}>
          {domain.verified_at ? `Check ${domain.hostname} again` : `Verify ${domain.hostname}`}
        </button>
      </p>
      <FallbacksForm domain={domain} onSaved={onChanged} />
    </section>
  );
}
