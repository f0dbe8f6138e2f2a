import { useState } from 'preact/hooks';
import type { ApiKey } from '../api/client';
import { outcome } from '../api/outcome';
import { useApi } from '../session/session';

/** Revoking is final (the key is refused at once, SPEC §14), so it takes a second, explicit click. */
export function RevokeKeyButton({ apiKey, onRevoked }: { apiKey: ApiKey; onRevoked: () => void }) {
  const api = useApi();
  const [step, setStep] = useState<'idle' | 'confirm' | 'busy'>('idle');
  const [error, setError] = useState<string | null>(null);
  const revoke = async () => {
    setStep('busy');
    const revoked = await outcome(api.DELETE('/api/v1/users/{id}/api-keys/{key_id}', { params: { path: { id: 'me', key_id: apiKey.id } } }));
    if (revoked.ok || revoked.problem.status === 404) return onRevoked();
    setError(revoked.problem.message);
    setStep('idle');
  };
  return (
    <span class="delete">
      {step === 'idle' ? (
        <button type="button" class="link-button" onClick={() => setStep('confirm')} aria-label={`Revoke ${apiKey.name}`}>
          Revoke
        </button>
      ) : (
        <>
          <button type="button" class="danger" disabled={step === 'busy'} onClick={() => void revoke()} aria-label={`Confirm: revoke ${apiKey.name} for good`}>
            Revoke for good
          </button>
          <button type="button" class="link-button" disabled={step === 'busy'} onClick={() => setStep('idle')} aria-label={`Keep ${apiKey.name}`}>
            Keep
          </button>
        </>
      )}
      {error && (
        <span class="field-error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
