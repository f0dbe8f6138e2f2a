import type { LinkChanges } from './link-rows.js';

/** The columns of a link's health (SPEC §24): written by the checks, reset by a new destination, never sent. */
export type HealthField =
  | 'health_status'
  | 'health_failures'
  | 'health_since'
  | 'health_error'
  | 'health_http_status'
  | 'health_checked_at'
  | 'next_check_at';

/** A new destination is unchecked: `unknown`, due for a check now (SPEC §24). */
export const HEALTH_RESET = {
  health_status: 'unknown',
  health_failures: 0,
  health_since: null,
  health_error: null,
  health_http_status: null,
  health_checked_at: null,
  next_check_at: 0,
} as const satisfies Pick<LinkChanges, HealthField>;
