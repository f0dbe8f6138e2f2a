import type { Config } from '../../config.js';
import type { UsersRepository } from '../users/index.js';
import { firstAdminCommand } from './instance.schemas.js';

export interface InstanceInfo {
  registration: Config['registration'];
  anonymous_links: boolean;
  first_admin_command: string | null;
}

export type InstanceService = ReturnType<typeof createInstanceService>;

/**
 * What a visitor needs to know before signing in (SPEC §18): whether sign-up is open, needs approval or is
 * closed, and on a fresh install that the first admin is made on the server, never through the API.
 */
export function createInstanceService(deps: {
  config: Pick<Config, 'registration' | 'anonymousLinks' | 'adminUsername' | 'cliCommand'>;
  users: Pick<UsersRepository, 'hasActiveAdmin'>;
}) {
  const { config, users } = deps;
  return {
    /** The command that makes the first admin, while there is none and ADMIN_USERNAME will not make one. */
    async firstAdminCommand(): Promise<string | null> {
      if (config.adminUsername !== null) return null;
      return (await users.hasActiveAdmin()) ? null : firstAdminCommand(config.cliCommand);
    },

    async info(): Promise<InstanceInfo> {
      return {
        registration: config.registration,
        anonymous_links: config.anonymousLinks,
        first_admin_command: await this.firstAdminCommand(),
      };
    },
  };
}
