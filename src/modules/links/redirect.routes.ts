import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { RedirectStatus } from '../../config.js';
import { buildClickEvent, type ClickSink, type DescribeVisit } from '../clicks/index.js';
import type { Clock } from '../../lib/clock.js';
import { assertPlainBody } from '../../plugins/content-type.js';
import type { LinksService } from './links.service.js';
import { refuse } from './redirect-refusal.js';
import { redirectResponses } from './redirect.openapi.js';
import { RESERVED_CODES } from './short-code.js';
import { ALIAS_PATTERN } from '../../lib/link-code.js';
import type { Visit, VisitDecision, VisitPolicy } from './visit-policy.js';
import type { DomainEntry } from '../domains/index.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: no "incoming request" / "request completed" lines for this route (app.ts's LogController) */
    accessLog?: boolean;
    /** marks the redirect route (request metrics put it in the redirect latency histogram) */
    redirect?: boolean;
  }
}

/** The domain a visit's host names (SPEC §19): a verified domain's entry, or undefined for the default domain. */
export interface VisitDomains {
  servedBy(host: string | undefined): Pick<DomainEntry, 'id' | 'hostname' | 'notFoundRedirect' | 'expiredRedirect'> | undefined;
}

export interface RedirectRoutesOptions {
  links: Pick<LinksService, 'resolve'>;
  domains: VisitDomains;
  policy: Pick<VisitPolicy, 'decide'>;
  clicks: Pick<ClickSink, 'enqueue'>;
  clock: Clock;
  status: RedirectStatus;
  /** country and anonymisation of a click (clicks/visit-context.ts); null: neither */
  describeVisit: DescribeVisit | null;
  /** whether each redirect writes the two access-log lines (links.module.ts decides) */
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
/** Every visit must reach the service to be counted (SPEC §6). */
export const REDIRECT_CACHE_CONTROL = 'private, no-store';
/** A domain's fallback is a temporary redirect: a link made later on that code must be reachable at once. */
export const FALLBACK_STATUS = 302;
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

type Domain = ReturnType<VisitDomains['servedBy']>;
type Visited = { linkId: number; code: string; alias: string | null; domain: Domain };

/** A domain's fallback instead of a 404 or 410 (SPEC §19); null where it has none. */
function fallbackOf(domain: Domain, decision: VisitDecision): string | null {
  if (!domain) return null;
  if (decision.kind === 'missing') return domain.notFoundRedirect;
  if (decision.kind === 'expired' || decision.kind === 'exhausted') return domain.expiredRedirect;
  return null;
}

/** A visit's answer once decided: the redirect and its click, the domain's fallback, or the refusal. */
function answerVisit(
  opts: Pick<RedirectRoutesOptions, 'clicks' | 'clock' | 'describeVisit'>,
  request: FastifyRequest,
  reply: FastifyReply,
  target: Visited,
  decision: VisitDecision,
  redirectStatus: number,
): FastifyReply {
  const { clicks, clock } = opts;
  const { linkId, code, alias } = target;
  if (decision.kind !== 'redirect') {
    const fallback = fallbackOf(target.domain, decision);
    if (fallback !== null) return reply.code(FALLBACK_STATUS).header('location', fallback).header('cache-control', REDIRECT_CACHE_CONTROL).send();
    return refuse(request, reply, decision, clock);
  }
  // HEAD answers the same headers and is not a visit.
  if (request.method !== 'HEAD') {
    // request.ips lists the socket peer and every address it forwarded for, when TRUST_PROXY trusts it.
    const viaTrustedProxy = (request.ips?.length ?? 0) > 1;
    clicks.enqueue(buildClickEvent({ linkId, shortCode: code, alias, clickedAt: clock.now(), ip: request.ip, headers: request.headers, viaTrustedProxy, domain: target.domain?.hostname }, opts.describeVisit));
  }
  // Location is the stored URL verbatim (validated at creation: printable ASCII, no CR/LF), or with the
  // visit's query appended, percent-encoded where needed (visit-policy.ts).
  return reply.code(redirectStatus).header('location', decision.url).header('cache-control', REDIRECT_CACHE_CONTROL).send();
}

/**
 * Both routes' answer to a visit: the link's lookup, the policy's decision, then the redirect and its click or
 * the refusal. Its closures are made once, when the routes are registered, not per visit.
 */
function createVisitHandler(opts: RedirectRoutesOptions) {
  const { links, policy } = opts;
  const answer = (request: FastifyRequest, reply: FastifyReply, target: Visited, decision: VisitDecision, status: number) =>
    answerVisit(opts, request, reply, target, decision, status);

  return (request: FastifyRequest, reply: FastifyReply, password: string | null, redirectStatus: number): FastifyReply | Promise<FastifyReply> => {
    const code = (request.params as { code: string }).code;
    const v: Visit = { method: request.method, query: queryOf(request.url), password, ip: request.ip, userAgent: request.headers['user-agent'] };
    // A verified domain's host resolves that domain's codes only; any other host the default domain's.
    const domain = opts.domains.servedBy(request.host);
    const decideFor = (target: Awaited<ReturnType<typeof links.resolve>>) => {
      const visited: Visited = target.kind === 'link'
        ? { linkId: target.id, code: target.code, alias: target.alias, domain }
        : { linkId: 0, code, alias: null, domain };
      const decision = policy.decide(target, v);
      return decision instanceof Promise
        ? decision.then((d) => answer(request, reply, visited, d, redirectStatus))
        : answer(request, reply, visited, decision, redirectStatus);
    };
    const target = links.resolve(code, domain?.id ?? 0);
    return target instanceof Promise ? target.then(decideFor) : decideFor(target);
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
  form.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  form.post(PASSWORD_FORM_URL, {
    config: { accessLog: opts.accessLog, redirect: true },
    schema: {
      operationId: 'unlockShortLink',
      tags: ['redirect'],
      summary: "Follow a password-protected link with its password (the HTML form's target): 303 to the target",
      security: [],
      consumes: ['application/x-www-form-urlencoded'],
      params: Type.Object({ code: Type.String({ pattern: NAME_PATTERN, maxLength: 64, description: 'The short code or one of its aliases (case-sensitive)' }) }),
      body: Type.Object({ password: Type.Optional(Type.String({ format: 'password', maxLength: 1024, description: "The link's password" })) }, { additionalProperties: false }),
      response: redirectResponses(303, 'post'),
    },
  }, (request, reply) => {
    const password = (request.body as { password?: string } | undefined)?.password;
    // See Other: the browser follows with a GET, and a reload does not post the password again.
    return visit(request, reply, password ? password : null, 303);
  });
};

/**
 * GET /{code} (SPEC §6, §13), in its own encapsulated context beside the JSON API: none of the API's hooks
 * (CORS, content types, ETag) run here. An ordinary link is one cache lookup (LinksService.resolve,
 * synchronous on a hit), the policy's synchronous "redirect" and one enqueue; a password, a visit limit or a
 * forwarded query are the policy's business (visit-policy.ts). POST /{code} is the password form's target.
 * The code is constrained in the route itself, so anything else falls through to the ordinary 404, and
 * static routes (/docs, /healthz, /v3/api-docs, ...) always win in find-my-way.
 */
export const redirectRoutes: FastifyPluginAsync<RedirectRoutesOptions> = async (app, opts) => {
  const { status } = opts;
  const visit = createVisitHandler(opts);

  app.get(REDIRECT_ROUTE_URL, {
    // The route url carries a pattern, so it is not the plain `/:code` the metrics recognise: say it.
    config: { accessLog: opts.accessLog, redirect: true },
    schema: {
      operationId: 'followShortLink',
      tags: ['redirect'],
      summary: 'Follow a short link (HEAD: the same headers, and no click is recorded)',
      description: 'A password-protected link takes the password as HTTP Basic credentials (any user name); browsers get a form that posts to POST /{code}.',
      security: [],
      params: Type.Object({ code: Type.String({ pattern: NAME_PATTERN, maxLength: 64, description: 'The short code or one of its aliases (case-sensitive)' }) }),
      response: redirectResponses(status, 'get'),
    },
  }, (request, reply) => visit(request, reply, basicPassword(request.headers.authorization), status));

  // The password form's answer, in a context of its own that parses forms and nothing else.
  await app.register(passwordFormRoute, { accessLog: opts.accessLog, visit });
};
