import Type from 'typebox';
import { renameSchemaProperties, toCamel } from '../../lib/case-mapping.js';
import { REGISTRATION_MODES } from '../../config.js';
import { AndroidAssetLinks, AppleAppSiteAssociation } from '../../lib/app-links.js';

/**
 * The command that creates the first admin on the server (the `ferry` CLI, SPEC §18), as it runs there: the tool
 * as CLI_COMMAND names it (`npx ferry` in a checkout, `ferry` in the container image) and the one argument the
 * command requires.
 */
export function firstAdminCommand(cliCommand: string): string {
  return `${cliCommand} admin create <username>`;
}

/** What anyone may know of this instance before signing in: what the sign-in and sign-up screens need. */
export const InstanceSchema = Type.Object(
  {
    registration: Type.Union(
      REGISTRATION_MODES.map((m) => Type.Literal(m)),
      {
        description:
          'Who may sign up (REGISTRATION): approval (accounts wait for an admin to activate them), open (active at once), closed (only an admin creates accounts)',
      },
    ),
    anonymous_links: Type.Boolean({
      description: 'Whether links may be created without a credential (ANONYMOUS_LINKS)',
    }),
    first_admin_command: Type.Union(
      [
        Type.String({
          maxLength: 140,
          pattern: '^[A-Za-z0-9 ./_<>-]+$',
          examples: ['npx ferry admin create <username>'],
        }),
        Type.Null(),
      ],
      {
        description:
          'While no active admin exists and ADMIN_USERNAME is not set: the command to run on the server to create the first admin ' +
          '(`<username>` stands for the name to give it). null otherwise',
      },
    ),
    // SPEC §23: what the sign-in screen offers besides the password.
    oidc_display_name: Type.Union(
      [
        Type.String({ minLength: 1, maxLength: 64, pattern: '^[^\\u0000-\\u001F\\u007F]+$', examples: ['Acme SSO'] }),
        Type.Null(),
      ],
      {
        description:
          'When single sign-on is set up (OIDC_ISSUER): the provider\'s name (OIDC_DISPLAY_NAME) for a "Sign in with …" button that opens /auth/oidc/login. null otherwise',
      },
    ),
    // SPEC §21: the default domain's app links (a domain's own are on the domain, never these).
    apple_app_site_association: AppleAppSiteAssociation,
    android_asset_links: AndroidAssetLinks,
  },
  {
    $id: 'Instance',
    additionalProperties: false,
    examples: [
      {
        registration: 'approval',
        anonymous_links: true,
        first_admin_command: null,
        oidc_display_name: null,
        apple_app_site_association: null,
        android_asset_links: null,
      },
    ],
  },
);

const readOnly = Type.Optional(Type.Unknown({ description: 'Read-only; ignored' }));

/** PATCH /instance (admins): the default domain's app links; the read-only fields may be echoed back. */
export const InstancePatchSchema = Type.Object(
  {
    apple_app_site_association: Type.Optional(AppleAppSiteAssociation),
    android_asset_links: Type.Optional(AndroidAssetLinks),
    registration: readOnly,
    anonymous_links: readOnly,
    first_admin_command: readOnly,
    oidc_display_name: readOnly,
  },
  {
    additionalProperties: false,
    description:
      "JSON merge patch (RFC 7396) of the default domain's app links: a document sent replaces the stored one whole; null clears it",
    examples: [{ android_asset_links: null }],
  },
);

export const InstanceV2Schema = renameSchemaProperties(InstanceSchema, toCamel, 'InstanceV2');

export const instanceSchemas = [InstanceSchema, InstanceV2Schema];
