import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { renameKeys, toCamel } from '../../lib/case-mapping.js';
import { errorResponses } from '../../lib/common.schemas.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import { TotpCodeBody } from './two-factor.schemas.js';
import type { TwoFactorService } from './two-factor.service.js';

type Options = { twoFactor: TwoFactorService; version: ApiVersion };

const edges = {
  1: {
    status: Type.Ref('TotpStatus'),
    setup: Type.Ref('TotpSetup'),
    codes: Type.Ref('RecoveryCodes'),
    out: <T>(body: T): T => body,
  },
  2: {
    status: Type.Ref('TotpStatusV2'),
    setup: Type.Ref('TotpSetupV2'),
    codes: Type.Ref('RecoveryCodesV2'),
    out: <T>(body: T): T => renameKeys<T>(body, toCamel),
  },
} as const;

/**
 * SPEC §23: the caller's own two-factor sign-in, with a JWT only (an API key must not be able to turn off its
 * user's second factor). Set-up and confirmation stay open to an admin who must set it up first
 * (TOTP_REQUIRED_FOR_ADMINS, `withoutTotp`). Secrets and recovery codes are never stored by caches (no-store).
 */
export const twoFactorRoutes: FastifyPluginAsyncTypebox<Options> = async (app, opts) => {
  const { twoFactor } = opts;
  const edge = edges[opts.version];
  const tags = ['two-factor'];

  app.post(
    '/users/me/totp',
    {
      onRequest: app.access('user'),
      config: { withoutTotp: true },
      schema: {
        operationId: 'setUpTotp',
        tags,
        summary: 'Start setting up two-factor sign-in: a new secret, not on until confirmed',
        description:
          'Answers the secret, its otpauth:// URL and a QR code of it. Asked again before confirming, it replaces the secret. 409 while two-factor sign-in is on.',
        response: {
          200: { ...edge.setup, description: 'The secret for the authenticator app' },
          ...errorResponses(401, 409, 429),
        },
      },
    },
    async (request, reply) =>
      reply.header('cache-control', 'no-store').send(edge.out(await twoFactor.setup(request.caller!))),
  );

  app.post(
    '/users/me/totp/confirm',
    {
      onRequest: app.access('user'),
      config: { withoutTotp: true },
      schema: {
        operationId: 'confirmTotp',
        tags,
        summary: 'Turn two-factor sign-in on with a current code; answers ten recovery codes, shown this once',
        body: TotpCodeBody,
        response: {
          200: { ...edge.codes, description: 'On; the recovery codes' },
          ...errorResponses(400, 401, 409, 413, 415, 429),
        },
      },
    },
    async (request, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send(edge.out(await twoFactor.confirm(request.caller!, request.body.code))),
  );

  await disableRoute(app, opts);
};

/** Its state, and turning it off, which takes a code: a stolen session alone cannot remove the second factor. */
const disableRoute: FastifyPluginAsyncTypebox<Options> = async (app, opts) => {
  const { twoFactor } = opts;
  const tags = ['two-factor'];
  const edge = edges[opts.version];

  app.get(
    '/users/me/totp',
    {
      onRequest: app.access('user'),
      config: { withoutTotp: true },
      schema: {
        operationId: 'getTotpStatus',
        tags,
        summary: "Whether the caller's two-factor sign-in is on, and how many recovery codes are left",
        response: { 200: { ...edge.status, description: 'Its state' }, ...errorResponses(401, 429) },
      },
    },
    async (request) => edge.out(await twoFactor.status(request.caller!)),
  );

  app.delete(
    '/users/me/totp',
    {
      onRequest: app.access('user'),
      schema: {
        operationId: 'disableTotp',
        tags,
        summary: 'Turn two-factor sign-in off with a current code or an unused recovery code',
        body: TotpCodeBody,
        response: {
          204: Type.Null({ description: 'Off' }),
          ...errorResponses(400, 401, 409, 413, 415, 429),
        },
      },
    },
    async (request, reply) => {
      await twoFactor.disable(request.caller!, request.body.code);
      return reply.code(204).send(null);
    },
  );
};
