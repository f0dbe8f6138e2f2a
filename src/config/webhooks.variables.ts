/** The variables of SPEC §22's webhooks (docs/webhooks.md). */
import { flag, int } from '../lib/env-variables.js';

export const webhooksVariables = {
  WEBHOOK_ALLOW_PRIVATE: flag(
    false,
    '`true`: webhooks may be sent to loopback, private, link-local, CGNAT, multicast and unspecified addresses ' +
      '(tests, instances on a private network). `false`: a hook whose host resolves to one is refused at creation ' +
      '(422 `WEBHOOK_TARGET_FORBIDDEN`) and each delivery to one fails with that reason',
  ),
  WEBHOOK_CONCURRENCY: int(
    16,
    1,
    1024,
    'Webhook deliveries this instance has in flight at once (each instance claims its own; several instances share the work)',
  ),
};
