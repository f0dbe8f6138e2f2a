import type { AppError } from './app-error.js';
import { MAX_ERROR_DETAILS, MAX_FIELD_LENGTH, MAX_MESSAGE_LENGTH } from './common.schemas.js';

/**
 * Text of the envelope within the bounds its schema publishes: control characters (a client may name a field
 * with one) shown as `\uXXXX`, and at most `max` characters (a framework message may echo a long URL).
 */
function bounded(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const visible = text.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return visible.length > max ? `${visible.slice(0, max - 1)}…` : visible;
}

/**
 * The error envelope (SPEC §2) of an AppError: what the app's error handler (plugins/errors.ts) sends, and what
 * the HTTP server writes itself for a request its parser refused (infra/client-errors.ts).
 */
export function buildEnvelope(err: AppError, requestId: string, now: number): object {
  const details = err.details
    .slice(0, MAX_ERROR_DETAILS)
    .map((d) => ({ field: bounded(d.field, MAX_FIELD_LENGTH), message: bounded(d.message, MAX_MESSAGE_LENGTH) }));
  return {
    error: { code: err.code, message: bounded(err.message, MAX_MESSAGE_LENGTH), details },
    requestId,
    timestamp: new Date(now).toISOString(),
  };
}
