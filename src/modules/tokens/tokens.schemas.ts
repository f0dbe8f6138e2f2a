import Type, { type Static } from 'typebox';

export const TokenCreateBody = Type.Object(
  {
    // No control characters: a NUL reached PostgreSQL in the lookup and failed there (500); no username has one.
    username: Type.String({ minLength: 1, maxLength: 254, pattern: '^[^\\u0000-\\u001F\\u007F]*$' }),
    password: Type.String({ format: 'password', minLength: 1, maxLength: 128 }),
    // SPEC §23: the second factor of an account that has it on (401 TOTP_REQUIRED without it).
    totp_code: Type.Optional(
      Type.String({
        format: 'password',
        minLength: 6,
        maxLength: 24,
        pattern: '^([0-9]{6}|[A-Za-z0-9 -]{16,24})$',
        description: 'A current code of the authenticator app, or an unused recovery code (each works once)',
      }),
    ),
  },
  { additionalProperties: false },
);

/** SPEC §23: the code single sign-on's callback put in `/app/?login_code=…`, exchanged once, within 60 s. */
export const LoginCodeBody = Type.Object(
  {
    login_code: Type.String({
      minLength: 1,
      maxLength: 128,
      pattern: '^[A-Za-z0-9_-]+$',
      description: 'The code of `/app/?login_code=<code>` after single sign-on (GET /auth/oidc/login)',
    }),
  },
  { additionalProperties: false, title: 'Login code' },
);

/** POST /tokens: a username and password, or single sign-on's login code. */
export const TokenRequestBody = Type.Union([TokenCreateBody, LoginCodeBody], {
  examples: [{ username: 'alice', password: 'correct horse battery staple' }, { login_code: 'q3Jx…' }],
});

export const TokenSchema = Type.Object(
  {
    accessToken: Type.String({
      maxLength: 2048,
      pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
      description: 'An HS256 JWT; send it as `Authorization: Bearer <token>`',
    }),
    tokenType: Type.Literal('Bearer'),
    expiresIn: Type.Integer({
      format: 'int32',
      minimum: 60,
      maximum: 30 * 86_400,
      description: 'Seconds until the token expires (TOKEN_TTL_SECONDS)',
    }),
    expiresAt: Type.String({ format: 'date-time', maxLength: 35 }),
  },
  {
    $id: 'Token',
    additionalProperties: false,
    examples: [
      {
        accessToken: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.c2lnbmF0dXJl',
        tokenType: 'Bearer',
        expiresIn: 3600,
        expiresAt: '2026-11-21T11:15:30.000Z',
      },
    ],
  },
);
export type Token = Static<typeof TokenSchema>;

export const TokenParams = Type.Object({
  jti: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }),
});

export const tokenSchemas = [TokenSchema];
