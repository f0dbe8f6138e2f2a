import type { LinkChanges } from './link-rows.js';

import type { HealthField } from '../../db/outbox-events.js';

export type { HealthField };

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
