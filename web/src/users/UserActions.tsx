import { useState } from 'preact/hooks';
import type { User } from '../api/client';
import { outcome } from '../api/outcome';
import { useApi } from '../session/session';

type Change = Partial<Pick<User, 'status' | 'role'>>;

/** A PATCH of the user's status or role, conditional on the row's version; busy while it runs, its error if any. */
function useUserChange(user: User, onChanged: (message: string) => void) {
  const api = useApi();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const apply = async (change: Change, done: string) => {
    setBusy(true);
    setError(null);
    const patched = await outcome(
      api.PATCH('/api/v1/users/{id}', {
        params: { path: { id: user.id } },
        body: { ...change, version: user.version },
      }),
    );
    setBusy(false);
    if (patched.ok) return onChanged(done);
    if (patched.problem.code === 'VERSION_CONFLICT')
      return onChanged(`${user.username} was changed meanwhile; the list was read again.`);
    setError(patched.problem.message);
  };
  return { busy, error, apply };
}

/**
 * Activate, suspend, change role. Each sends the row's `version` (SPEC §3): if the user changed since the
 * list was read, the API answers 409 and the list is read again instead of overwriting that change.
 * An admin's own row has no actions (a self-suspension would lock the only admin out).
 */
export function UserActions({ user, onChanged }: { user: User; onChanged: (message: string) => void }) {
  const { busy, error, apply } = useUserChange(user, onChanged);

  const otherRole = user.role === 'admin' ? 'user' : 'admin';
  return (
    <span class="row-actions">
      {user.status !== 'active' && (
        <button
          type="button"
          disabled={busy}
          onClick={() => void apply({ status: 'active' }, `${user.username} is now active.`)}
          aria-label={`Activate ${user.username}`}
        >
          Activate
        </button>
      )}
      {user.status !== 'suspended' && (
        <button
          type="button"
          class="danger"
          disabled={busy}
          onClick={() => void apply({ status: 'suspended' }, `${user.username} is suspended.`)}
          aria-label={`Suspend ${user.username}`}
        >
          Suspend
        </button>
      )}
      <button
        type="button"
        class="secondary"
        disabled={busy}
        onClick={() =>
          void apply({ role: otherRole }, `${user.username} is now ${otherRole === 'admin' ? 'an admin' : 'a user'}.`)
        }
        aria-label={`Make ${user.username} ${otherRole === 'admin' ? 'an admin' : 'a user'}`}
      >
        {otherRole === 'admin' ? 'Make admin' : 'Make user'}
      </button>
      {error && (
        <span class="field-error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
