/** The variables of SPEC §24's destination checks (docs/link-checks.md). */
import Type, { type TSchema } from 'typebox';
import { flag, int } from '../lib/env-variables.js';

export const linkCheckVariables = {
  LINK_CHECKS: flag(
    true,
    "`true`: each active link's destination is checked when it is created or changed, then every `LINK_CHECK_INTERVAL_HOURS` (docs/link-checks.md)",
  ),
  LINK_CHECK_INTERVAL_HOURS: Type.Number({
    default: 24,
    minimum: 0.001,
    maximum: 8760,
    must: 'be a number of hours between 0.001 and 8760, e.g. 24 or 0.5',
    description: "Hours between two checks of a link's destination (fractions allowed); the checks are spread over it",
  }),
  LINK_CHECKS_PER_MINUTE: int(
    60,
    1,
    1_000_000,
    'Destination checks started in any 60 s, by the whole deployment (one instance checks at a time); one at a time per destination host',
  ),
  LINK_CHECK_ALLOW_PRIVATE: flag(
    false,
    '`true`: destination checks may connect to loopback, private, link-local, CGNAT and multicast addresses. `false`: such a destination is never requested (its `health` stays `unknown`, `error` saying why)',
  ),
} satisfies Record<string, TSchema>;
