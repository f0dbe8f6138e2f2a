import Type, { type Static } from 'typebox';
import { renameSchemaProperties, toCamel } from '../../lib/case-mapping.js';

/** A code typed by the user: six digits from the authenticator, or a recovery code (with or without dashes). */
export const TotpCode = (description: string) =>
  Type.String({
    minLength: 6,
    maxLength: 24,
    pattern: '^([0-9]{6}|[A-Za-z0-9 -]{16,24})$',
    description,
  });

export const TotpCodeBody = Type.Object(
  { code: TotpCode('A current code of the authenticator app (or, to turn it off, an unused recovery code)') },
  { additionalProperties: false },
);
export type TotpCodeBodyT = Static<typeof TotpCodeBody>;

/** SPEC §23's set-up: what the authenticator app is given. v1 names as the contract; v2 camelCase. */
export const TotpSetupSchema = Type.Object(
  {
    secret: Type.String({
      minLength: 16,
      maxLength: 64,
      pattern: '^[A-Z2-7]+=*$',
      description: 'The 160-bit secret in base32, for apps that cannot scan the QR code',
    }),
    otpauth_url: Type.String({
      maxLength: 1024,
      pattern: '^otpauth://totp/',
      description: 'The otpauth:// URL (Key URI Format) an authenticator app reads',
    }),
    qr_svg: Type.String({
      maxLength: 200_000,
      pattern: '^<svg ',
      description: 'The otpauth:// URL as a QR code, an SVG document',
    }),
  },
  { $id: 'TotpSetup', additionalProperties: false },
);

export const RecoveryCodesSchema = Type.Object(
  {
    recovery_codes: Type.Array(
      Type.String({ minLength: 19, maxLength: 19, pattern: '^[a-z2-7]{4}(-[a-z2-7]{4}){3}$' }),
      {
        minItems: 10,
        maxItems: 10,
        description: 'Ten codes, each usable once in place of a TOTP code; shown this once, stored hashed',
      },
    ),
  },
  { $id: 'RecoveryCodes', additionalProperties: false },
);

export const TotpStatusSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'Whether sign-in asks for a code' }),
    enabled_at: Type.Union([Type.String({ format: 'date-time', maxLength: 35 }), Type.Null()]),
    recovery_codes_left: Type.Integer({ format: 'int32', minimum: 0, maximum: 10 }),
  },
  { $id: 'TotpStatus', additionalProperties: false },
);

export const TotpStatusSchemaV2 = renameSchemaProperties(TotpStatusSchema, toCamel, 'TotpStatusV2');
export const TotpSetupSchemaV2 = renameSchemaProperties(TotpSetupSchema, toCamel, 'TotpSetupV2');
export const RecoveryCodesSchemaV2 = renameSchemaProperties(RecoveryCodesSchema, toCamel, 'RecoveryCodesV2');

export const twoFactorSchemas = [
  TotpStatusSchema,
  TotpSetupSchema,
  RecoveryCodesSchema,
  TotpStatusSchemaV2,
  TotpSetupSchemaV2,
  RecoveryCodesSchemaV2,
];
