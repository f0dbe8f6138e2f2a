import Type from 'typebox';
import { ErrorEnvelopeSchema, ref } from '../../lib/common.schemas.js';

const envelopeOrPage = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: {
    'application/json': { schema: ref(ErrorEnvelopeSchema) },
    'text/html': {
      schema: Type.String({
        maxLength: 4096,
        pattern: '^<!doctype html>',
        description: 'A small self-contained page for browsers (Accept prefers text/html)',
      }),
    },
  },
});

const redirect = (status: number, kind: 'get' | 'post') => ({
  description:
    kind === 'get'
      ? `Redirect to the link's original_url (status set by REDIRECT_STATUS; ${status} here)`
      : 'See Other: the password was right; the browser follows to the target with a GET',
  headers: {
    Location: {
      type: 'string',
      description:
        "The original_url exactly as stored, or the target the link's first matching rule (or its split's variant) chose (SPEC §21); with forward_query: plus the visit's query string",
    },
    'Cache-Control': {
      type: 'string',
      description:
        'private, no-store: every visit reaches the service and is counted (and rules answer each visitor apart)',
    },
    'Set-Cookie': {
      type: 'string',
      maxLength: 256,
      pattern: '^ferry_v_[0-9]+=[A-Za-z0-9]+; ',
      description:
        "A sticky split's variant, on the visit that assigned it: ferry_v_<link id>=<variant id>; Path=/<code>; Max-Age=2592000; HttpOnly; SameSite=Lax",
    },
  },
  type: 'null',
});

/** SPEC §21: what a link unfurler gets for a link with a preview, instead of the redirect. */
const previewResponse = {
  description:
    "A link unfurler's visit (Slack, Discord, X, Facebook, LinkedIn, WhatsApp, Telegram, iMessage, Mastodon: by User-Agent) " +
    "to a link with a preview: a page of Open Graph and Twitter card tags (og:url the short URL), counted as a bot's click. Everyone else is redirected",
  headers: {
    'Cache-Control': { type: 'string', description: 'private, no-store: the answer depends on the user agent' },
    Vary: { type: 'string', enum: ['User-Agent'], description: 'User-Agent' },
  },
  content: {
    'text/html': {
      schema: Type.String({
        maxLength: 65536,
        pattern: '^<!doctype html>',
        description: 'The page: <meta property="og:…"> and <meta name="twitter:…"> tags, every value HTML-escaped',
      }),
    },
  },
};

/** What GET and POST /{code} answer, for the OpenAPI document (the pages and the envelope are alternatives). */
export function redirectResponses(status: number, kind: 'get' | 'post'): Record<number, unknown> {
  const fallback = {
    description: "A domain's fallback (not_found_redirect, expired_redirect) instead of a 404 or 410 (SPEC §19)",
    headers: {
      Location: { type: 'string', description: 'The fallback URL' },
      'Cache-Control': { type: 'string', description: 'private, no-store' },
    },
    type: 'null',
  };
  return {
    ...(kind === 'get' ? { 200: previewResponse } : {}),
    ...(status === 302 ? {} : { 302: fallback }),
    [status]:
      status === 302
        ? {
            ...redirect(status, kind),
            description: `${redirect(status, kind).description}; or ${fallback.description}`,
          }
        : redirect(status, kind),
    401: envelopeOrPage(
      'LINK_PASSWORD_REQUIRED: the link has a password and none (or a wrong one) was given. Browsers get the password form',
      {
        'WWW-Authenticate': {
          type: 'string',
          description: 'Basic (send the password as HTTP Basic credentials, any user name); for the HTML form: Form',
        },
      },
    ),
    404: envelopeOrPage('No link has this code, or it was deleted'),
    410: envelopeOrPage(
      'LINK_EXPIRED: the link has expired; LINK_EXHAUSTED: it has had its max_visits; LINK_DISABLED: an admin disabled it',
    ),
    429: envelopeOrPage(
      'RATE_LIMITED: too many requests from this address, or too many wrong passwords for this link from it',
      {
        'Retry-After': { type: 'integer', minimum: 0, description: 'Seconds to wait' },
      },
    ),
    ...(kind === 'post'
      ? { 400: ref(ErrorEnvelopeSchema), 413: ref(ErrorEnvelopeSchema), 415: ref(ErrorEnvelopeSchema) }
      : {}),
  };
}
