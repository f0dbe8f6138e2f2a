import Type, { type Static, type TSchema } from 'typebox';

/**
 * Shapes shared by every module. Schemas with an `$id` are registered once with Fastify and become
 * components of the OpenAPI document; routes point at them with `ref()`.
 */
/** Text without control characters (names, messages: nothing a client needs them for, and PostgreSQL refuses NUL). */
export const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001F\\u007F]*$';
/** A cursor: base64url JSON, a dot, a base64url HMAC (lib/pagination.ts). */
export const CURSOR_PATTERN = '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$';
/** An envelope lists at most this many details: the first offending fields of a body that has thousands. */
export const MAX_ERROR_DETAILS = 100;
/** Longer field names and messages are cut (plugins/errors.ts), control characters shown escaped. */
export const MAX_FIELD_LENGTH = 256;
export const MAX_MESSAGE_LENGTH = 1024;

export const ErrorDetailSchema = Type.Object(
  {
    field: Type.String({
      maxLength: MAX_FIELD_LENGTH,
      pattern: NO_CONTROL_CHARACTERS,
      description: 'The body field, query parameter or header, named as the client sent it',
    }),
    message: Type.String({ maxLength: MAX_MESSAGE_LENGTH, pattern: NO_CONTROL_CHARACTERS }),
  },
  { $id: 'ErrorDetail', additionalProperties: false },
);

export const ErrorEnvelopeSchema = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.Union(
          [
            'VALIDATION_ERROR',
            'MALFORMED_JSON',
            'UNAUTHENTICATED',
            'FORBIDDEN',
            'INSUFFICIENT_SCOPE',
            'NOT_FOUND',
            'METHOD_NOT_ALLOWED',
            'NOT_ACCEPTABLE',
            'CONFLICT',
            'VERSION_CONFLICT',
            'IDEMPOTENCY_KEY_IN_USE',
            'LINK_EXPIRED',
            'LINK_EXHAUSTED',
            'LINK_PASSWORD_REQUIRED',
            'PRECONDITION_FAILED',
            'PAYLOAD_TOO_LARGE',
            'UNSUPPORTED_MEDIA_TYPE',
            'IDEMPOTENCY_KEY_REUSED',
            'ACCOUNT_NOT_ACTIVE',
            'DOMAIN_NOT_VERIFIED',
            'RATE_LIMITED',
            'INTERNAL_ERROR',
            'SERVICE_UNAVAILABLE',
            // Running an instance for other people (SPEC §18).
            'REGISTRATION_CLOSED',
            'LINK_DISABLED',
            'DESTINATION_BLOCKED',
            // Faults and abuse (SPEC §17): the last active admin stays one; the data directory's disk is full or read-only.
            'LAST_ADMIN',
            'STORAGE_UNAVAILABLE',
            // Answered before routing, by the HTTP layer (SPEC §12): a request that stalls, a URL or headers too large.
            'REQUEST_TIMEOUT',
            'URI_TOO_LONG',
            'REQUEST_HEADERS_TOO_LARGE',
            // Signing in for organisations (SPEC §23): a second factor, password sign-in switched off.
            'INVALID_CREDENTIALS',
            'TOTP_REQUIRED',
            'TOTP_SETUP_REQUIRED',
            'PASSWORD_LOGIN_DISABLED',
            // A webhook's URL resolves to an address inside (SPEC §22).
            'WEBHOOK_TARGET_FORBIDDEN',
          ].map((c) => Type.Literal(c)),
        ),
        message: Type.String({ maxLength: MAX_MESSAGE_LENGTH, pattern: NO_CONTROL_CHARACTERS }),
        details: Type.Array(Type.Ref('ErrorDetail'), {
          maxItems: MAX_ERROR_DETAILS,
          description: `One item per offending field (at most ${MAX_ERROR_DETAILS})`,
        }),
      },
      { additionalProperties: false },
    ),
    requestId: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:@+=-]{1,128}$' }),
    timestamp: Type.String({ format: 'date-time', maxLength: 35 }),
  },
  {
    $id: 'ErrorEnvelope',
    additionalProperties: false,
    description: 'The one error shape of every error response',
    examples: [
      {
        error: {
          code: 'VALIDATION_ERROR',
          message: 'Request body is invalid',
          details: [{ field: 'email', message: 'must be a valid e-mail address' }],
        },
        requestId: 'f3a1c9e2-8b1d-4d61-9a39-0c3e5a1b2c4d',
        timestamp: '2026-11-21T10:15:30.123Z',
      },
    ],
  },
);
export type ErrorEnvelope = Static<typeof ErrorEnvelopeSchema>;

export const PagePaginationSchema = Type.Object(
  {
    page: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 1_000_000 })),
    limit: Type.Integer({ format: 'int32', minimum: 1, maximum: 100 }),
    total: Type.Optional(Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
    totalPages: Type.Optional(Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
    nextCursor: Type.Union([Type.String({ maxLength: 512, pattern: CURSOR_PATTERN }), Type.Null()]),
  },
  {
    $id: 'Pagination',
    additionalProperties: false,
    description:
      'Page mode carries page, limit, total, totalPages and nextCursor; cursor mode carries limit and nextCursor (null at the end).',
  },
);

/** Schemas registered with Fastify (and so published as components). Modules add theirs. */
export const sharedSchemas: TSchema[] = [ErrorDetailSchema, ErrorEnvelopeSchema, PagePaginationSchema];

/** A reference to a registered schema that still types the handler as the schema's static type. */
export function ref<T extends TSchema>(schema: T): T {
  const id = (schema as { $id?: string }).$id;
  if (!id) throw new Error('ref() needs a schema with an $id');
  return Type.Unsafe<Static<T>>(Type.Ref(id)) as unknown as T;
}

/** The error responses a route declares, each pointing at the envelope component. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = ref(ErrorEnvelopeSchema);
  return out;
}

/** ISO 8601 UTC with milliseconds and `Z`. */
export const isoTime = (ms: number): string => new Date(ms).toISOString();

/** Bounded building blocks: every integer, string and array in the document says how large it may be. */
export const Id = (description = 'A 64-bit id (at most 2^53-1)') =>
  Type.Integer({ format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description });
export const Count = (description: string) =>
  Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });
/** ISO 8601 (RFC 3339); the API answers UTC with milliseconds and `Z` (24 characters). */
export const Instant = (description = 'ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z') =>
  Type.String({ format: 'date-time', maxLength: 35, description });

export const IdParam = Id();
