import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { createTestApp, engines } from '../helpers/app.js';
import { useTestApp, useUser } from '../helpers/fixtures.js';
import { expectEnvelope } from '../helpers/expect-envelope.js';
import { createUser } from '../helpers/factories.js';
import { createLazyCompilers } from '../../src/plugins/lazy-compilers.js';

/**
 * Start-up under 3 s (SPEC §12): validators and response serializers compile on first use or in the warm-up
 * after listening (src/plugins/lazy-compilers.ts), not while the app gets ready. What must not change: every
 * schema still compiles (a broken one fails here, not in a request), and answers are validated and
 * serialized as before, whichever comes first — a request or the warm-up.
 */
describe.each(engines)('lazy schema compilers on %s', (engine) => {
  const t = useTestApp(engine);
  const user = useUser(t);

  it('when requests come before the warm-up, then they are validated and serialized as the document says', async () => {
    const bad = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: user.token,
      payload: { original_url: 'https://example.com/x', max_visits: 'ten' },
    });
    expectEnvelope(bad, 400, 'VALIDATION_ERROR');
    expect(JSON.stringify(bad.body)).toContain('max_visits');
    const good = await t.request({
      method: 'POST',
      url: '/api/v1/links',
      token: user.token,
      payload: { original_url: 'https://example.com/x' },
    });
    expect(good.status).toBe(201);
    // The serializer drops what the schema does not declare; the link is answered with its declared fields only.
    expect(Object.keys(good.body)).toContain('short_code');
  });
});

/**
 * Compiling every schema is the suite's most expensive step (hundreds of validators and serializers), and the
 * schemas are the same on either engine: it runs once, on the embedded default.
 */
describe('lazy schema compilers, all of them', () => {
  it('when the app is ready, then most compilers are still pending; warmed while requests arrive, then every one compiles without an error and the requests are answered in between', async () => {
    const t = await createTestApp(engines[0]!);
    try {
      const user = await createUser(t);
      // Two API versions with their validators and serializers: hundreds of them.
      expect(t.app.compilers.pending()).toBeGreaterThan(200);
      const errors: unknown[] = [];
      const warming = t.app.compilers.warm(2, (err) => errors.push(err));
      const answered: number[] = [];
      let done = false;
      void warming.then(() => (done = true));
      while (!done) {
        answered.push((await t.request({ url: '/api/v1/users/me', token: user.token })).status);
        // inject() answers through promise jobs alone: without this pause the loop would starve the warm-up's
        // setImmediate, where a real client's next request arrives through I/O.
        await new Promise((resolve) => setImmediate(resolve));
      }
      await warming;
      expect(errors).toEqual([]);
      expect(t.app.compilers.pending()).toBe(0);
      expect(answered.length).toBeGreaterThan(1);
      expect(answered.every((s) => s === 200)).toBe(true);
    } finally {
      await t.close();
    }
  });
});

describe('lazy compilers on their own', () => {
  it('when a validator does not compile, then the warm-up hands its error on, compiles the others, and its first use throws it', async () => {
    const compilers = createLazyCompilers();
    let compiled = 0;
    const ajv = new Ajv();
    // Keys of this test alone: compiled functions are kept for the process, by key.
    const run = Math.random().toString(36).slice(2);
    const broken = compilers.validator(
      () => `broken ${run}`,
      () => ajv.compile({ type: 'no-such-type' }),
    );
    const fine = compilers.validator(
      () => `fine ${run}`,
      () => {
        compiled += 1;
        return ajv.compile({ const: 1 });
      },
    );
    expect(compilers.pending()).toBe(2);
    const errors: unknown[] = [];
    await compilers.warm(1, (err) => errors.push(err));
    expect(compilers.pending()).toBe(0);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toMatch(/schema is invalid/);
    expect(compiled).toBe(1);
    expect(fine(1)).toBe(true);
    expect(fine(2)).toBe(false);
    expect(compiled).toBe(1); // compiled once, by the warm-up
    expect(() => broken(1)).toThrow(/schema is invalid/);
  });

  it('when two apps compile the same schema, then it is compiled once and both use it; another compiles its own', async () => {
    const run = Math.random().toString(36).slice(2);
    const ajv = new Ajv({ allErrors: true });
    let compiled = 0;
    const compile = (schema: object) => () => {
      compiled += 1;
      return ajv.compile(schema);
    };
    const first = createLazyCompilers().validator(() => `same ${run}`, compile({ type: 'integer' }));
    const second = createLazyCompilers().validator(() => `same ${run}`, compile({ type: 'integer' }));
    const other = createLazyCompilers().validator(() => `other ${run}`, compile({ type: 'string' }));
    expect(first(1)).toBe(true);
    expect(second('a')).toBe(false);
    expect(second.errors?.[0]?.keyword).toBe('type');
    expect(compiled).toBe(1);
    expect(other('a')).toBe(true);
    expect(compiled).toBe(2);
  });
});
