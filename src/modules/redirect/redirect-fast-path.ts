import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RawHandler } from '../../infra/http-server.js';
import type { Metrics } from '../../infra/metrics.js';
import type { Clock } from '../../lib/clock.js';
import type { RedirectLimiter } from '../../plugins/redirect-limit.js';
import { hasDuplicateHost } from '../../plugins/request-target.js';
import { clickRecord, type ClickSink, type RecordAddress } from '../clicks/index.js';
import { REDIRECT_ROUTE_URL } from './redirect.routes.js';
import type { VisitContexts } from './visit-context.js';
import type { Redirect, VisitPolicy } from './visit-policy.js';

export interface RedirectFastPathDeps {
  /** the redirect a visit gets when memory alone decides it (visit-policy.ts decideFromCache) */
  policy: Pick<VisitPolicy, 'decideFromCache'>;
  contexts: VisitContexts;
  clicks: Pick<ClickSink, 'enqueue' | 'settled'>;
  clock: Clock;
  /** IP_ANONYMIZE's shortening and daily hash of a click's address; null: addresses as seen */
  recordAddress: RecordAddress | null;
  /** the redirect's limiter (in process, or in Redis), shared with the route's hook */
  limiter: Pick<RedirectLimiter, 'admit' | 'policy'>;
  requestId: (req: IncomingMessage) => string;
  metrics: Pick<Metrics, 'observeFastRedirect'>;
  /** the overload guard's current verdict: would a request be shed now (plugins/overload.ts) */
  underPressure: () => boolean;
}

// A code or an alias (SPEC §20): the same lookup answers both.
const CODE_URL = /^\/[0-9a-zA-Z_-]{1,64}$/;

/**
 * The response head's fields in the route's order; the values of one answer are put in and written at once
 * (writeHead copies them into the head synchronously), so no array is made per answer.
 */
const HEAD = [
  'x-request-id',
  '',
  'ratelimit-policy',
  '',
  'ratelimit',
  '',
  'location',
  '',
  'cache-control',
  '',
  'content-length',
  '0',
];
/** The same with a split's sticky cookie (SPEC §21), set on the visit that assigned it, after Cache-Control. */
const HEAD_WITH_COOKIE = [...HEAD.slice(0, 10), 'set-cookie', '', ...HEAD.slice(10)];

/** The redirect's answer as the route writes it (headers in its order, an empty body), and its request metrics. */
function writeRedirect(
  deps: Pick<RedirectFastPathDeps, 'limiter' | 'requestId' | 'metrics'>,
  req: IncomingMessage,
  res: ServerResponse,
  decision: Redirect,
  started: number,
  rateLimit: string,
): void {
  const { status, headers } = decision;
  const cookie = headers['set-cookie'];
  const head = cookie === undefined ? HEAD : HEAD_WITH_COOKIE;
  head[1] = deps.requestId(req);
  head[3] = deps.limiter.policy;
  head[5] = rateLimit;
  head[7] = headers.location;
  head[9] = headers['cache-control'];
  if (cookie !== undefined) head[11] = cookie;
  res.writeHead(status, head);
  res.end();
  deps.metrics.observeFastRedirect(req.method!, REDIRECT_ROUTE_URL, status, (performance.now() - started) / 1000);
}

/**
 * The redirect's most common answer without Fastify's request machinery: a GET or HEAD of /{code} whose
 * link is in the cache and live, from a client under its rate limit, while the service is not under
 * pressure. Measured (bench/, 2-core VM): the route through Fastify's hooks cost about 29 µs of the event
 * loop per redirect against 16 µs for a bare Fastify route; this path costs about as much as the bare route.
 *
 * It answers exactly what the route would, from the same decision of the visit policy (redirect.routes.ts;
 * test/modules/redirect/redirect-fast-path.test.ts compares the two): X-Request-Id, the redirect's
 * RateLimit-Policy/RateLimit, the decision's Location and Cache-Control, an empty body, the click enqueued (GET only: a HEAD records none), and the same request metrics. Anything else — a miss, an
 * expired or unknown code, a link with a password, max_visits or a preview, a limit reached,
 * overload, a query string, another method, more than one Host header, a trusted proxy
 * (TRUST_PROXY), access logging (LOG_LEVEL=debug), shutting down — returns false untouched and takes the
 * ordinary route, which answers it with every hook. With the limit's counters in Redis the verdict comes with
 * the turn's round trip: a request past the limit is then handed to the route (`fallback`) with its verdict.
 * The limiter records the click of an admitted visit (`admit`'s record): with the click stream in the same Redis,
 * a visit's count and its click travel together (one script run per turn), so the answer waits for one round
 * trip, not two.
 */
export function createRedirectFastPath(deps: RedirectFastPathDeps): RawHandler & { disable(): void } {
  const { policy, clicks, clock, limiter, underPressure } = deps;
  // One visit context and one click record, refilled per click: both are done with once it is enqueued.
  const visitor = deps.contexts.reused();
  const clickOf = clickRecord(deps.recordAddress);
  let enabled = true;
  const handler: RawHandler = (req, res, fallback) => {
    const method = req.method;
    const url = req.url;
    if (!enabled || (method !== 'GET' && method !== 'HEAD') || url === undefined || !CODE_URL.test(url)) return false;
    // Two Host headers name no one domain: the route answers 400 (plugins/request-target.ts).
    if (hasDuplicateHost(req)) return false;
    const started = performance.now();
    // Without a trusted proxy, Host is the only name there is. A password, a visit limit, a forwarded query,
    // a miss or a refusal is decided by the route (visit-policy.ts).
    const ip = req.socket.remoteAddress;
    if (ip === undefined) return false;
    // A link's routing rules read the visitor (its agent, languages, cookie): the context is made only then.
    const decision = policy.decideFromCache(req.headers.host, url.slice(1), method, () =>
      visitor(method, ip, req.headers, false),
    );
    if (decision === undefined || underPressure()) return false;
    const link = decision.link!;
    const now = clock.now();
    const answer = (rateLimit: string): void => writeRedirect(deps, req, res, decision, started, rateLimit);
    // With a journal (or the Redis stream), the answer leaves once the click is durable: batched per turn.
    // SPEC §6: a HEAD answers the same headers and records no click (it is no visit; the route does the same).
    let recorded = false;
    const record =
      method === 'GET'
        ? () => {
            const facts = {
              linkId: link.id,
              shortCode: link.code,
              alias: link.alias,
              clickedAt: now,
              domain: decision.domain,
              rule: decision.rule,
              variant: decision.variant,
              visitor: visitor(method, ip, req.headers, false),
            };
            recorded = clicks.enqueue(clickOf(facts));
          }
        : null;
    const serve = (rateLimit: string): void => {
      const pending = recorded ? clicks.settled() : null;
      if (pending === null) answer(rateLimit);
      else void pending.then(() => answer(rateLimit));
    };
    const admitted = limiter.admit(req, ip, record);
    if (admitted === null) return false;
    if (typeof admitted === 'string') serve(admitted);
    else void admitted.then((rateLimit) => (rateLimit === null ? fallback(req, res) : serve(rateLimit)));
    return true;
  };
  return Object.assign(handler, { disable: () => void (enabled = false) });
}
