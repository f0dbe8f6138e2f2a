import { useState } from 'preact/hooks';
import type { Outcome } from '../api/outcome';

/**
 * A final action (deleting a link, revoking a key) in two explicit clicks: the first asks, the second acts.
 * `act` calls the API; success, or a 404 (already gone), calls `onDone`; any other refusal is shown beside the
 * buttons. `label` names what is acted on, for the buttons' accessible names ("Delete abc", "Keep abc").
 */
export function ConfirmButton({
  verb,
  label,
  act,
  onDone,
}: {
  verb: string;
  label: string;
  act: () => Promise<Outcome<unknown>>;
  onDone: () => void;
}) {
  const [step, setStep] = useState<'idle' | 'confirm' | 'busy'>('idle');
  const [error, setError] = useState<string | null>(null);
  const confirm = async () => {
    setStep('busy');
    const result = await act();
    if (result.ok || result.problem.status === 404) return onDone();
    setError(result.problem.message);
    setStep('idle');
  };
  return (
    <span class="delete">
      {step === 'idle' ? (
        <button type="button" class="link-button" onClick={() => setStep('confirm')} aria-label={`${verb} ${label}`}>
          {verb}
        </button>
      ) : (
        <>
          <button
            type="button"
            class="danger"
            disabled={step === 'busy'}
            onClick={() => void confirm()}
            aria-label={`Confirm: ${verb.toLowerCase()} ${label} for good`}
          >
            {verb} for good
          </button>
          <button
            type="button"
            class="link-button"
            disabled={step === 'busy'}
            onClick={() => setStep('idle')}
            aria-label={`Keep ${label}`}
          >
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
