/**
 * The variables of an instance run for other people (SPEC §18, docs/moderation.md): who may sign up and create
 * links, how the first-run hint names the CLI, which hosts links may not reach, which DNS servers verify domains.
 */
import Type, { type TSchema } from 'typebox';
import { flag, optional } from '../lib/env-variables.js';

export const openInstanceVariables = {
  REGISTRATION: Type.Enum(['approval', 'open', 'closed'], {
    default: 'approval',
    description:
      'Who may sign up: `approval` (accounts are pending until an admin activates them), `open` (active at once), `closed` (only an admin creates accounts; others get 403 `REGISTRATION_CLOSED`)',
  }),
  ANONYMOUS_LINKS: flag(true, '`false`: creating a link needs a credential (401 without one)'),
  CLI_COMMAND: Type.String({
    default: 'npx ferry',
    pattern: '^[A-Za-z0-9 ./_-]{1,100}$',
    must: 'be 1-100 characters of A-Z a-z 0-9 space . / _ -',
    description:
      'How the first-run hint (start-up log, sign-in page) names the `ferry` tool where the server runs: `npx ferry` in a checkout; the container image sets `ferry`, on its PATH',
  }),
  BLOCKED_HOSTS_FILE: optional(Type.String(), {
    description:
      'A file of host names links may not point at, one a line (a name blocks its subdomains; `#` comments); read at start, when it changes and on SIGHUP. A link or a domain fallback to one is 422 `DESTINATION_BLOCKED`',
  }),
  DNS_SERVERS: Type.Array(Type.String(), {
    default: [],
    read: 'dnsServers',
    documentedDefault: "the system's resolvers",
    description:
      'The DNS servers domain verification asks (TXT records, and the address of the HTTP check), `host[:port]` (port 53 by default), comma-separated',
  }),
} satisfies Record<string, TSchema>;
