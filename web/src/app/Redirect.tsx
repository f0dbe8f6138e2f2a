import { useEffect } from 'preact/hooks';
import { navigate } from '../router/router';

/** Sends the browser elsewhere without a history entry (a screen that needs another state first). */
export function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}
