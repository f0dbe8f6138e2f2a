import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { RedirectStatus } from '../../config.js';
import { buildClickEvent, type ClickSink, type RecordAddress } from '../clicks/index.js';
import type { Clock } from '../../lib/clock.js';
import { assertPlainBody } from '../../plugins/content-type.js';
import { refuse } from './redirect-refusal.js';
import { ERROR_PAGE_CSP } from './redirect-page.js';
import { redirectResponses } from './redirect.openapi.js';
import { RESERVED_CODES } from '../links/index.js';
import { ALIAS_PATTERN } from '../../lib/link-code.js';
import type { VisitContext, VisitContexts } from './visit-context.js';
import type { Visit, VisitDecision, VisitPolicy } from './visit-policy.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: no "incoming request" / "request completed" lines for this route (app.ts's LogController) */
    accessLog?: boolean;
    /** marks the redirect route (request metrics put it in the redirect latency histogram) */
    redirect?: boolean;
  }
}

export interface RedirectRoutesOptions {
  policy: Pick<VisitPolicy, 'decide'>;
  contexts: VisitContexts;
  clicks: Pick<ClickSink, 'enqueue'>;
  clock: Clock;
  status: RedirectStatus;
  /** IP_ANONYMIZE's shortening and daily hash of a click's address; null: addresses as seen */
  recordAddress: RecordAddress | null;
  /** whether each redirect writes the two access-log lines (redirect.module.ts decides) */
  accessLog: boolean;
}

/**
 * A visit's path names a code or an alias (SPEC §20): one pattern covers both (a code's 0-9a-zA-Z{1,8} is
 * within an alias's 0-9a-zA-Z_-{1,64}), and one lookup answers either.
 */
const NAME_PATTERN = ALIAS_PATTERN;
/** The route's template as Fastify reports it (request.routeOptions.url): the metrics' `route` label. */
export const REDIRECT_ROUTE_URL = `/:code(${NAME_PATTERN})`;
/**
 * The password form's target: a code, but none of the service's own first path segments, so that POST
 * /healthz stays a 405 naming the methods /healthz has.
 */
const PASSWORD_FORM_URL = `/:code(^(?!(?:${[...RESERVED_CODES].join('|')})$)${NAME_PATTERN.slice(1)})`;
/** A form with one password field needs no more. */
const FORM_BODY_LIMIT = 4096;

/** The password of HTTP Basic credentials (any user name, SPEC §13); null when none or malformed. */
export function basicPassword(header: string | undefined): string | null {
  const m = header === undefined ? null : /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? null : decoded.slice(colon + 1);
}

const queryOf = (url: string): string => {
  const q = url.indexOf('?');
  return q === -1 ? '' : url.slice(q + 1);
};

/** A visit's answer as the policy decided it: the redirect and its click, or the refusal. */
function answerVisit(
  opts: Pick<RedirectRoutesOptions, 'clicks' | 'clock' | 'recordAddress'>,
  request: FastifyRequest,
  reply: FastifyReply,
  decision: VisitDecision,
  context: VisitContext,
): FastifyReply {
  const { clicks, clock } = opts;
  if (decision.kind !== 'redirect' && decision.kind !== 'preview') return refuse(request, reply, decision, clock);
  const { link } = decision;
  // A domain's fallback follows no link. A HEAD answers the same headers and records no click (SPEC §6): it is
  // no visit. It is still treated as a bot's for what a visit decides (no split assigned, no visit used up).
  if (link !== null && request.method !== 'HEAD') {
    const facts = {
      linkId: link.id,
      shortCode: link.code,
      alias: link.alias,
      clickedAt: clock.now(),
      domain: decision.domain,
      // an unfurler's card is no routed visit (it is a bot's, which rules never assign)
      rule: decision.kind === 'redirect' ? decision.rule : null,
      variant: decision.kind === 'redirect' ? decision.variant : null,
      visitor: context,
    };
    clicks.enqueue(buildClickEvent(facts, opts.recordAddress));
  }
  if (decision.kind === 'preview') {
    // An unfurler's card (SPEC §21): its click above is a bot's (the visit's agent said so).
    return reply
      .code(200)
      .headers(decision.headers)
      .header('content-security-policy', ERROR_PAGE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(decision.html);
  }
  // Location is the stored URL verbatim (validated at creation: printable ASCII, no CR/LF), or with the
  // visit's query appended, percent-encoded where needed (visit-policy.ts).
  return reply.code(decision.status).headers(decision.headers).send();
}

/**
 * Both routes' answer to a visit: its context (once), the policy's decision, then the redirect and its click or
 * the refusal. Its closures are made once, when the routes are registered, not per visit.
 */
function createVisitHandler(opts: RedirectRoutesOptions) {
  const { policy, contexts } = opts;
  return (
    request: FastifyRequest,
    reply: FastifyReply,
    password: string | null,
  ): FastifyReply | Promise<FastifyReply> => {
    // request.ips lists the socket peer and every address it forwarded for, when TRUST_PROXY trusts it.
    const context = contexts(request.method, request.ip, request.headers, (request.ips?.length ?? 0) > 1);
    const name = (request.params as { code: string }).code;
    const visit: Visit = {
      name,
      host: request.host,
      method: request.method,
      query: queryOf(request.url),
      password,
      context,
    };
    const decision = policy.decide(visit);
    return decision instanceof Promise
      ? decision.then((d) => answerVisit(opts, request, reply, d, context))
      : answerVisit(opts, request, reply, decision, context);
  };
}

/** POST /{code}: the password form's target, parsing forms and nothing else. */
interface PasswordFormOptions {
  accessLog: boolean;
  visit: ReturnType<typeof createVisitHandler>;
}

const passwordFormRoute: FastifyPluginAsync<PasswordFormOptions> = async (form, opts) => {
  const { visit } = opts;
  form.removeAllContentTypeParsers();
  form.addHook('preParsing', async (request) => assertPlainBody(request));
  form.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );
  form.post(
    PASSWORD_FORM_URL,
    {
      config: { accessLog: opts.accessLog, redirect: true },
      schema: {
        operationId: 'unlockShortLink',
        tags: ['redirect'],
        summary: "Follow a password-protected link with its password (the HTML form's target): 303 to the target",
        security: [],
        consumes: ['application/x-www-form-urlencoded'],
        params: Type.Object({
          code: Type.String({
            pattern: NAME_PATTERN,
            maxLength: 64,
            description: 'The short code or one of its aliases (case-sensitive)',
          }),
        }),
        body: Type.Object(
          {
            password: Type.Optional(
              Type.String({ format: 'password', maxLength: 1024, description: "The link's password" }),
            ),
          },
          { additionalProperties: false },
        ),
        response: redirectResponses(303, 'post'),
      },
    },
    (request, reply) => {
      const password = (request.body as { password?: string } | undefined)?.password;
      // The policy answers a form's post with See Other (visit-policy.ts).
      return visit(request, reply, password ? password : null);
    },
  );
};

/**
 * GET /{code} (SPEC §6, §13), in its own encapsulated context beside the JSON API: none of the API's hooks
 * (CORS, content types, ETag) run here. An ordinary link is the policy's synchronous decision (one cache
 * lookup: redirect-resolver.ts) and one enqueue; a password, a visit limit, a forwarded query and a domain's
 * fallbacks are the policy's business too (visit-policy.ts). POST /{code} is the password form's target.
 * The code is constrained in the route itself, so anything else falls through to the ordinary 404, and
 * static routes (/docs, /healthz, /v3/api-docs, ...) always win in find-my-way.
 */
export const redirectRoutes: FastifyPluginAsync<RedirectRoutesOptions> = async (app, opts) => {
  const { status } = opts;
  const visit = createVisitHandler(opts);

  app.get(
    REDIRECT_ROUTE_URL,
    {
      // The route url carries a pattern, so it is not the plain `/:code` the metrics recognise: say it.
      config: { accessLog: opts.accessLog, redirect: true },
      schema: {
        operationId: 'followShortLink',
        tags: ['redirect'],
        summary: 'Follow a short link (HEAD: the same headers, and no click is recorded)',
        description:
          'A password-protected link takes the password as HTTP Basic credentials (any user name); browsers get a form that posts to POST /{code}.',
        security: [],
        params: Type.Object({
          code: Type.String({
            pattern: NAME_PATTERN,
            maxLength: 64,
            description: 'The short code or one of its aliases (case-sensitive)',
          }),
        }),
        response: redirectResponses(status, 'get'),
      },
    },
    (request, reply) => visit(request, reply, basicPassword(request.headers.authorization)),
  );

  // The password form's answer, in a context of its own that parses forms and nothing else.
  await app.register(passwordFormRoute, { accessLog: opts.accessLog, visit });
};
