import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, preHandlerHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { AttemptLimiter } from '../infra/attempt-limiter.js';
import type { HashLanes } from '../infra/hash-lanes.js';
import { rateLimited } from './rate-limit.headers.js';

/**
 * Password hashing is a budget (SPEC §17). A route that hashes says how many hashes a request will cause, from
 * its validated body (`config.passwordHashes`); before its handler runs (and so before any hashing starts) the
 * whole count is taken from the caller's PASSWORD_HASHES_PER_MINUTE, or the request is 429 `RATE_LIMITED`
 * with nothing hashed: a bulk creation over the budget hashes none of its passwords. The rest of the request then
 * runs in a lane of its own (infra/hash-lanes.ts), so its hashes take their fair turn beside other callers', and
 * stop when the client goes away. A link unlock is counted where it happens (modules/redirect/visit-policy.ts).
 */

declare module 'fastify' {
  interface FastifyInstance {
    /** the process's password hashing (what waits and what runs: tests watch it) */
    passwordHashing: Pick<HashLanes, 'status'>;
  }
  interface FastifyContextConfig {
    /** how many password hashes this request causes, read from its validated body; 0: none */
    passwordHashes?: (request: FastifyRequest) => number;
  }
}

export const PASSWORD_HASHES_POLICY = 'password-hashes';

/** The caller a hash counts against: the user, the API key, or the client address without a credential. */
export function hashBudgetKey(request: FastifyRequest): string {
  const caller = request.caller;
  if (caller?.apiKey) return `key:${caller.apiKey.id}`;
  return caller ? `user:${caller.userId}` : addressKey(request.ip);
}

export const addressKey = (ip: string): string => `ip:${normalizeIP(ip)}`;

export interface PasswordHashBudgetOptions {
  budget: AttemptLimiter;
  perMinute: number;
  lanes: Pick<HashLanes, 'enter'>;
}

function budgetHook(
  count: (request: FastifyRequest) => number,
  opts: PasswordHashBudgetOptions,
): preHandlerHookHandler {
  return function passwordHashBudget(request, reply, done) {
    const hashes = count(request);
    if (hashes === 0) {
      done();
      return;
    }
    opts.budget.take(hashBudgetKey(request), hashes).then(
      (retryAfter) => {
        if (retryAfter !== null) {
          done(rateLimited(PASSWORD_HASHES_POLICY, opts.perMinute, 60, retryAfter));
          return;
        }
        // `done` inside the lane: the later hooks and the handler (and their hashes) run in it.
        const lane = opts.lanes.enter(() => done());
        reply.raw.once('close', () => {
          if (!reply.raw.writableEnded) lane.gone();
          lane.close();
        });
      },
      (err: Error) => done(err),
    );
  };
}

async function passwordHashBudget(app: FastifyInstance, opts: PasswordHashBudgetOptions): Promise<void> {
  app.addHook('onRoute', (route) => {
    const count = route.config?.passwordHashes;
    if (count === undefined) return;
    // First among the route's preHandlers: a request over its budget claims no Idempotency-Key.
    route.preHandler = [budgetHook(count, opts), ...[route.preHandler ?? []].flat()];
  });
}

export default fp(passwordHashBudget, { name: 'ferry-password-hash-budget' });

/** How many of these bodies' fields carry a password (a string; null removes one). */
export const passwordsIn = (...bodies: unknown[]): number =>
  bodies.filter(
    (b) => typeof b === 'object' && b !== null && typeof (b as { password?: unknown }).password === 'string',
  ).length;
