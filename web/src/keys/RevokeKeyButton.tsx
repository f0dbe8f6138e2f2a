import type { ApiKey } from '../api/client';
import { outcome } from '../api/outcome';
import { useApi } from '../session/session';
import { ConfirmButton } from '../ui/ConfirmButton';

/** Revoking is final (the key is refused at once, SPEC §14), so it takes a second, explicit click. */
export function RevokeKeyButton({ apiKey, onRevoked }: { apiKey: ApiKey; onRevoked: () => void }) {
  const api = useApi();
  const revoke = () =>
    outcome(api.DELETE('/api/v1/users/{id}/api-keys/{key_id}', { params: { path: { id: 'me', key_id: apiKey.id } } }));
  return <ConfirmButton verb="Revoke" label={apiKey.name} act={revoke} onDone={onRevoked} />;
}
