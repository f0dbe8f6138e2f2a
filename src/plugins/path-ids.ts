import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../lib/app-error.js';
import { ME } from '../lib/user-path.js';

/**
 * Ids in paths are canonical decimal integers (SPEC §17): `/users/1`, never `/users/01`, `0x1`, `1e0` or
 * `1.0`. Ajv coerces a path parameter with `Number()`, which reads every one of those as 1, so that one
 * resource answered under many names (and a cache or a log keyed by path saw them as different ones). Every
 * integer path parameter of a route is checked here, in the route's first onRequest hook, before its access
 * policy: the answer is a 400 naming the parameter whoever asks.
 */

const CANONICAL = /^(?:0|[1-9][0-9]*)$/;
const RULE = 'must be a decimal integer without a sign, leading zeros, a fraction or an exponent, e.g. 42';

interface IntegerParam {
  name: string;
  /** words the parameter may be instead of a number (`me`) */
  words: readonly string[];
}

type SchemaNode = { type?: unknown; const?: unknown; anyOf?: SchemaNode[]; properties?: Record<string, SchemaNode> };

/** The integer parameters of a params schema: an integer, or a union of an integer and constant words. */
export function integerParams(schema: unknown): IntegerParam[] {
  const properties = (schema as SchemaNode | undefined)?.properties ?? {};
  const out: IntegerParam[] = [];
  for (const [name, node] of Object.entries(properties)) {
    const branches = node.anyOf ?? [node];
    if (!branches.some((b) => b.type === 'integer')) continue;
    const words = branches.filter((b) => typeof b.const === 'string').map((b) => b.const as string);
    // A user's `{id}` may be `me` wherever the access policy resolves it (lib/user-path.ts), after this check.
    out.push({ name, words: name === 'id' ? [...words, ME] : words });
  }
  return out;
}

function checkIds(params: IntegerParam[]): onRequestHookHandler {
  return function canonicalIds(request: FastifyRequest, _reply, done) {
    const values = request.params as Record<string, string | undefined>;
    const details = params
      .filter(({ name, words }) => {
        const value = values[name];
        return value !== undefined && !CANONICAL.test(value) && !words.includes(value);
      })
      .map(({ name }) => ({ field: name, message: RULE }));
    done(details.length ? new AppError('VALIDATION_ERROR', 'Path parameters are invalid', details) : undefined);
  };
}

async function pathIdsPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route: RouteOptions) => {
    const params = integerParams((route.schema as { params?: unknown } | undefined)?.params);
    if (params.length === 0) return;
    route.onRequest = [checkIds(params), ...[route.onRequest ?? []].flat()];
  });
}

export default fp(pathIdsPlugin, { name: 'ferry-path-ids' });
