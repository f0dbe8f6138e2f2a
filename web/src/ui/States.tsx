import type { ComponentChildren } from 'preact';
import type { Problem } from '../api/problem';
import { useUser } from '../session/session';

/** What a screen shows while its data is on the way. */
export function Loading({ what }: { what: string }) {
  return (
    <p class="state state-loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** Nothing to show yet, and what to do about it. */
export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="state state-empty">{children}</div>;
}

/** A call failed: the server's message, and a way to try again when trying again can help. */
export function ErrorState({ problem, onRetry }: { problem: Problem; onRetry?: () => void }) {
  return (
    <div class="state state-error" role="alert">
      <p>{problem.message}</p>
      {onRetry && problem.status !== 403 && problem.status !== 404 && (
        <button type="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

/**
 * An admin's screen (all links, the audit log): for anyone else, the refusal the API would give, without asking
 * it. `what` completes "Only admins can see …".
 */
export function AdminOnly({ what, children }: { what: string; children: ComponentChildren }) {
  const user = useUser();
  if (user.role === 'admin') return <>{children}</>;
  return (
    <ErrorState
      problem={{
        status: 403,
        code: 'FORBIDDEN',
        message: `Only admins can see ${what}.`,
        fields: {},
        retryAfter: null,
      }}
    />
  );
}

/** A form's message that belongs to no single field. */
export function FormError({ message }: { message: string | null }) {
  return message ? (
    <p class="form-error" role="alert">
      {message}
    </p>
  ) : null;
}
