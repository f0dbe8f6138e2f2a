import { outcome } from '../api/outcome';
import { useApi } from '../session/session';
import { ConfirmButton } from '../ui/ConfirmButton';

/**
 * Deleting is final (the code is never issued again, SPEC §6), so it takes a second, explicit click; the
 * API's answer is shown beside the button when it refuses.
 */
export function DeleteLinkButton({ code, onDeleted }: { code: string; onDeleted: () => void }) {
  const api = useApi();
  const remove = () => outcome(api.DELETE('/api/v1/links/{code}', { params: { path: { code } } }));
  return <ConfirmButton verb="Delete" label={code} act={remove} onDone={onDeleted} />;
}
