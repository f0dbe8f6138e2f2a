/** A visit that gets no redirect (SPEC §13): the error envelope, or for a browser the page saying why. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../lib/app-error.js';
import type { Clock } from '../../lib/clock.js';
import { sendAppError } from '../../plugins/errors.js';
import { ERROR_PAGE_CSP, passwordPage, prefersHtml, redirectErrorPage, type ErrorPage } from './redirect-page.js';
import type { Refusal } from './visit-policy.js';

const BASIC_REALM = 'Basic realm="Password-protected link", charset="UTF-8"';
/**
 * The HTML password page is a 401 too (RFC 9110 §15.5.2: with a challenge). A Basic challenge would make the
 * browser show its own login dialog over the page, so the page names a scheme browsers do not act on.
 */
const FORM_REALM = 'Form realm="Password-protected link"';

const REFUSALS: Record<Exclude<Refusal['kind'], 'password'>, { page: ErrorPage; error: () => AppError }> = {
  missing: { page: 'missing', error: () => new AppError('NOT_FOUND', 'No link has this code') },
  expired: { page: 'expired', error: () => new AppError('LINK_EXPIRED', 'This link has expired') },
  disabled: {
    page: 'disabled',
    error: () => new AppError('LINK_DISABLED', 'This link has been disabled by the administrators of this service'),
  },
  exhausted: {
    page: 'exhausted',
    error: () => new AppError('LINK_EXHAUSTED', 'This link has been followed as many times as it allows'),
  },
  throttled: {
    page: 'throttled',
    error: () => new AppError('RATE_LIMITED', 'Too many wrong passwords for this link from your address'),
  },
};

/** A visit that gets no redirect: the error envelope, or for a browser the page saying why (SPEC §13). */
export function refuse(request: FastifyRequest, reply: FastifyReply, decision: Refusal, clock: Clock): FastifyReply {
  reply.header('vary', 'Accept');
  const html = prefersHtml(request.headers.accept);
  let err: AppError;
  let body: string;
  if (decision.kind === 'password') {
    const message = decision.wrong
      ? 'The password is not right'
      : 'This link needs a password (a form post or HTTP Basic credentials)';
    err = new AppError('LINK_PASSWORD_REQUIRED', message, [], { 'WWW-Authenticate': html ? FORM_REALM : BASIC_REALM });
    body = passwordPage(decision.wrong);
  } else {
    const refusal = REFUSALS[decision.kind];
    err = refusal.error();
    if (decision.kind === 'throttled') err.headers['Retry-After'] = String(decision.retryAfterSeconds);
    body = redirectErrorPage(refusal.page);
  }
  if (!html) return sendAppError(reply, err, clock.now());
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return reply
    .code(err.status)
    .header('cache-control', 'no-store')
    .header('content-security-policy', ERROR_PAGE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .type('text/html; charset=utf-8')
    .send(body);
}
