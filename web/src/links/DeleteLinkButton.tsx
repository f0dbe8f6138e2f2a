import { useState } from 'preact/hooks';
import { outcome } from '../api/outcome';
import { useApi } from '../session/session';

/**
 * Deleting is final (the code is never issued again, SPEC §6), so it takes a second, explicit click; the
 * API's answer is shown beside the button when it refuses.
 */
export function DeleteLinkButton({ code, onDeleted }: { code: string; onDeleted: () => void }) {
  const api = useApi();
  const [step, setStep] = useState<'idle' | 'confirm' | 'busy'>('idle');
  const [error, setError] = useState<string | null>(null);
  const remove = async () => {
    setStep('busy');
    const deleted = await outcome(api.DELETE('/api/v1/links/{code}', { params: { path: { code } } }));
    if (deleted.ok || deleted.problem.status === 404) return onDeleted();
    setError(deleted.problem.message);
    setStep('idle');
  };
  return (
    <span class="delete">
      {step === 'idle' && (
        <button type="button" class="link-button" onClick={() => setStep('confirm')} aria-label={`Delete ${code}`}>
          Delete
        </button>
      )}
      {step !== 'idle' && (
        <>
          <button type="button" class="danger" disabled={step === 'busy'} onClick={() => void remove()} aria-label={`Confirm: delete ${code} for good`}>
            Delete for good
          </button>
          <button type="button" class="link-button" disabled={step === 'busy'} onClick={() => setStep('idle')} aria-label={`Keep ${code}`}>
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
