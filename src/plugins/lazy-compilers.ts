import { createHash } from 'node:crypto';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { ValidateFunction } from 'ajv';
import type { FastifyServerOptions } from 'fastify';

type SerializerFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']
>;

/**
 * Start-up under 3 s (SPEC §12): Fastify compiles every route's validators and response serializers while the
 * app gets ready — about 3 s of CPU for the routes of both API versions — and the process listened only after.
 * The compilers here hand Fastify, at once, a function that compiles on its first call; `warm()` compiles the
 * rest in slices between the event loop's other work once the process listens, so a request that comes first
 * compiles what it needs and the steady state is what it was. `compileAll()` compiles everything at once:
 * a test calls it so that a schema no compiler accepts fails the suite, not a request.
 *
 * What is compiled is keyed by what it is compiled from (the schema's JSON, and the compiler's own schemas and
 * options) and kept for the process: the two API versions' routes mostly share their schemas, and so do the apps
 * of a process that builds many (the test suite), so each distinct schema is compiled once (`compiledFor`).
 */
export interface LazyCompilers {
  /** for Fastify's `schemaController.compilersFactory.buildSerializer` */
  serializerFactory: SerializerFactory;
  /**
   * wraps a validator compilation; the result compiles on first use (or is one already compiled from the same
   * `key()`) and reports its errors like Ajv's
   */
  validator(key: () => string, compile: () => ValidateFunction): ValidateFunction;
  /**
   * compiles what no request has needed yet, a slice (about `sliceMs`) per event-loop turn; a schema that
   * does not compile is handed to `onError` (its requests then answer 500 through the error handler)
   */
  warm(sliceMs?: number, onError?: (err: unknown) => void): Promise<void>;
  /** compiles everything now; throws what a compiler throws */
  compileAll(): void;
  /** how many are still to compile */
  pending(): number;
  /** ends a warm-up in progress (the app closes) */
  stop(): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** the app's lazy validator and serializer compilers (server.ts warms them once listening) */
    compilers: LazyCompilers;
  }
}

export function createLazyCompilers(): LazyCompilers {
  const pending = new Set<() => void>();
  const state = { stopped: false };

  const serializerFactory: SerializerFactory = (externalSchemas, options) => {
    const build = SerializerSelector()(externalSchemas, options);
    let context: string | undefined;
    const key = (schema: unknown): string =>
      `serializer\0${(context ??= digest(JSON.stringify([externalSchemas, options])))}\0${JSON.stringify(schema)}`;
    return (route) => {
      const serializer = once(pending, () => compiledFor(key(route.schema), () => build(route)));
      return (data: unknown) => serializer()(data);
    };
  };

  function validator(key: () => string, compile: () => ValidateFunction): ValidateFunction {
    const validate = once(pending, () => compiledFor(`validator\0${key()}`, compile));
    // Fastify reads `errors` off the function it was given, after a failed call.
    const lazy = ((data: unknown) => {
      const fn = validate();
      const ok = fn(data);
      lazy.errors = fn.errors;
      return ok;
    }) as ValidateFunction;
    return lazy;
  }

  return {
    serializerFactory,
    validator,
    warm: (sliceMs = 10, onError: (err: unknown) => void = () => undefined) => warm(pending, state, sliceMs, onError),
    compileAll: () => {
      for (const force of [...pending]) force();
    },
    pending: () => pending.size,
    stop: () => {
      state.stopped = true;
    },
  };
}

/**
 * The process's compiled validators and serializers by what they were compiled from. Bounded by the distinct
 * schemas of the routes (a few thousand entries); a compiled function holds no app's state (an Ajv validator
 * writes its `errors` on itself, read at once after the synchronous call).
 */
const compiled = new Map<string, unknown>();

function compiledFor<F>(source: string, compile: () => F): F {
  const key = digest(source);
  let fn = compiled.get(key) as F | undefined;
  if (fn === undefined) {
    fn = compile();
    compiled.set(key, fn);
  }
  return fn;
}

/** A short key for a long text (a schema's JSON, or all of an app's shared schemas). */
export const digest = (text: string): string => createHash('sha256').update(text).digest('base64url');

/** `compile` runs once, by the first call or by the warm-up, whichever comes first. */
function once<F>(pending: Set<() => void>, compile: () => F): () => F {
  let fn: F | undefined;
  const force = (): F => {
    if (fn === undefined) {
      pending.delete(force);
      fn = compile();
    }
    return fn;
  };
  pending.add(force);
  return force;
}

/** Compiles what is pending, about `sliceMs` per event-loop turn, until nothing is left or the app stops. */
async function warm(
  pending: Set<() => void>,
  state: { stopped: boolean },
  sliceMs: number,
  onError: (err: unknown) => void,
): Promise<void> {
  while (!state.stopped && pending.size > 0) {
    const until = performance.now() + sliceMs;
    for (const force of pending) {
      try {
        force();
      } catch (err) {
        pending.delete(force);
        onError(err);
      }
      if (performance.now() >= until) break;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}
