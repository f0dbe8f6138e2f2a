import type { components } from '../api/openapi';
import { outcome } from '../api/outcome';
import { useApiData } from '../api/use-api-data';
import { useApi } from './session';

export type Instance = components['schemas']['Instance'];

/**
 * What this instance allows before signing in (GET /instance, SPEC §18): who may sign up, and on a fresh
 * install the command that creates the first admin. Null until it is known (or when it cannot be had: the
 * screens then say what is true everywhere).
 */
export function useInstance(): Instance | null {
  const api = useApi();
  const info = useApiData(() => outcome(api.GET('/api/v1/instance')), []);
  return info.state === 'ready' ? info.data : null;
}
