import type { Config } from '../../config.js';
import { validationError, type ErrorDetail } from '../../lib/app-error.js';
import { APP_LINK_DOCUMENTS, appLinkText, appLinkValue, type AppLinkDocument } from '../../lib/app-links.js';
import type { Clock } from '../../lib/clock.js';
import type { UsersRepository } from '../users/index.js';
import type { InstanceSettings } from './instance.repository.js';
import { firstAdminCommand } from './instance.schemas.js';

export interface InstanceInfo {
  registration: Config['registration'];
  anonymous_links: boolean;
  first_admin_command: string | null;
  /** SPEC §23: the provider's name on "Sign in with …", when single sign-on is set up */
  oidc_display_name: string | null;
  /** SPEC §21: the default domain's app links */
  apple_app_site_association: Record<string, unknown> | null;
  android_asset_links: Array<Record<string, unknown>> | null;
}

/** What an admin may change of the instance (PATCH /instance): the default domain's app links. */
export type InstancePatch = Partial<Pick<InstanceInfo, AppLinkDocument>>;

export type InstanceService = ReturnType<typeof createInstanceService>;

/** What the instance's description reads of the configuration. */
export type InstanceConfig = Pick<
  Config,
  'registration' | 'anonymousLinks' | 'adminUsername' | 'cliCommand' | 'oidcIssuer' | 'oidcClientId' | 'oidcDisplayName'
>;

/**
 * What a visitor needs to know before signing in (SPEC §18): whether sign-up is open, needs approval or is
 * closed, and on a fresh install that the first admin is made on the server, never through the API. And the
 * default domain's app links (SPEC §21), which an admin sets.
 */
export function createInstanceService(deps: {
  config: InstanceConfig;
  users: Pick<UsersRepository, 'hasActiveAdmin'>;
  settings: InstanceSettings;
  clock: Clock;
}) {
  const { config, users, settings } = deps;
  return {
    /** The command that makes the first admin, while there is none and ADMIN_USERNAME will not make one. */
    async firstAdminCommand(): Promise<string | null> {
      if (config.adminUsername !== null) return null;
      return (await users.hasActiveAdmin()) ? null : firstAdminCommand(config.cliCommand);
    },

    async info(): Promise<InstanceInfo> {
      const appLinks = await settings.appLinks();
      return {
        registration: config.registration,
        anonymous_links: config.anonymousLinks,
        first_admin_command: await this.firstAdminCommand(),
        oidc_display_name: config.oidcIssuer && config.oidcClientId ? config.oidcDisplayName : null,
        apple_app_site_association: appLinkValue(appLinks.apple_app_site_association),
        android_asset_links: appLinkValue(appLinks.android_asset_links),
      };
    },

    /** An admin's change (the route checks the role): each document sent is replaced whole, null clears it. */
    async patch(input: InstancePatch): Promise<InstanceInfo> {
      const details: ErrorDetail[] = [];
      const changes: Partial<Record<AppLinkDocument, string | null>> = {};
      for (const field of Object.keys(APP_LINK_DOCUMENTS) as AppLinkDocument[]) {
        const text = appLinkText(input[field], field, details);
        if (text !== undefined) changes[field] = text;
      }
      if (details.length) throw validationError(details, 'Request body is invalid');
      if (Object.keys(changes).length) await settings.setAppLinks(changes, deps.clock.now());
      return this.info();
    },

    /** The default domain's document as stored (JSON text), served at its well-known path; null: none. */
    appLink: (name: AppLinkDocument): Promise<string | null> => settings.appLink(name),
  };
}
