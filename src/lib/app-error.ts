/** The closed set of error codes of SPEC §2, each with its one HTTP status. */
export const errorStatus = {
  VALIDATION_ERROR: 400,
  MALFORMED_JSON: 400,
  UNAUTHENTICATED: 401,
  INVALID_CREDENTIALS: 401,
  TOTP_REQUIRED: 401,
  FORBIDDEN: 403,
  REGISTRATION_CLOSED: 403,
  PASSWORD_LOGIN_DISABLED: 403,
  TOTP_SETUP_REQUIRED: 403,
  INSUFFICIENT_SCOPE: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_ACCEPTABLE: 406,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  VERSION_CONFLICT: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  LAST_ADMIN: 409,
  LINK_EXPIRED: 410,
  LINK_EXHAUSTED: 410,
  LINK_DISABLED: 410,
  LINK_PASSWORD_REQUIRED: 401,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  ACCOUNT_NOT_ACTIVE: 422,
  DESTINATION_BLOCKED: 422,
  DOMAIN_NOT_VERIFIED: 422,
  WEBHOOK_TARGET_FORBIDDEN: 422,
  RATE_LIMITED: 429,
  REQUEST_HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  STORAGE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface ErrorDetail {
  field: string;
  message: string;
}

/**
 * What services throw. The error handler turns it into the envelope; `headers` carries what the status
 * needs (`Allow` on 405, `Retry-After` on 409/429/503, `WWW-Authenticate` on 401).
 */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = errorStatus[code];
  }
}

export const notFound = (what = 'Resource'): AppError => new AppError('NOT_FOUND', `${what} not found`);
export const forbidden = (message = 'You are not allowed to do this'): AppError => new AppError('FORBIDDEN', message);
export const validationError = (details: ErrorDetail[], message = 'Request is invalid'): AppError =>
  new AppError('VALIDATION_ERROR', message, details);

/** Why a presented credential (a JWT or an API key) was refused; the auth plugin turns it into 401 + WWW-Authenticate. */
export class InvalidTokenError extends Error {}
