import { afterAll, beforeAll } from 'vitest';
import { createTestApp, type Engine, type TestApp, type TestAppOptions } from './app.js';
import { createUser, type CreatedUser } from './factories.js';

/**
 * A stand-in for a value a beforeAll hook fills in: every property read (and write) goes to the value once it
 * exists, so the stand-in can be used like the value itself inside tests and later hooks. Used earlier — while
 * vitest collects the tests — it throws, naming the helper.
 */
function filledLater<T extends object>(what: string, get: () => T | undefined): T {
  const value = (): T => {
    const v = get();
    if (v === undefined) throw new Error(`${what}: used before its beforeAll hook ran`);
    return v;
  };
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(value(), key),
    set: (_, key, v) => Reflect.set(value(), key, v),
    has: (_, key) => Reflect.has(value(), key),
    ownKeys: () => Reflect.ownKeys(value()),
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(value(), key);
      return d && { ...d, configurable: true };
    },
  });
}

/**
 * The app of a describe block, the setup almost every HTTP test file needs:
 *
 * ```ts
 * describe.each(engines)('links on %s', (engine) => {
 *   const t = useTestApp(engine, { env: { PUBLIC_BASE_URL: 'https://fry.example' } });
 *   const owner = useUser(t);
 *   const admin = useUser(t, { role: 'admin' });
 *   it('when …, then …', async () => { await t.request({ url: '/api/v1/links', token: owner.token }); });
 * });
 * ```
 *
 * It registers a beforeAll that builds the app with `createTestApp(engine, opts)` and an afterAll that closes it,
 * and returns the app at once; its fields and methods are the real app's once that beforeAll has run. Vitest runs
 * a block's beforeAll hooks in the order they were registered (and its afterAll hooks in reverse), so users,
 * links or other setup registered after this call find the app started and are undone before it closes.
 * A test that restarts or replaces the app keeps calling createTestApp itself.
 */
export function useTestApp(engine: Engine, opts: TestAppOptions = {}): TestApp {
  return useBeforeAll(
    'useTestApp',
    () => createTestApp(engine, opts),
    (t) => t.close(),
  );
}

/**
 * The same for any fixture a block starts once and closes at its end (e.g. the domains' app with its DNS server,
 * test/modules/domains/domains.helpers.ts): `create` runs in a beforeAll, `close` in an afterAll, and the
 * returned stand-in is the created value once the beforeAll has run.
 */
export function useBeforeAll<T extends object>(
  what: string,
  create: () => Promise<T>,
  close?: (value: T) => Promise<void>,
): T {
  let value: T | undefined;
  beforeAll(async () => {
    value = await create();
  });
  if (close) afterAll(async () => (value === undefined ? undefined : close(value)));
  return filledLater(what, () => value);
}

/**
 * A user of the block's app (see useTestApp; or of a fixture holding it as `t`), signed up and logged in by a
 * beforeAll with `createUser(t, opts)`: active and of role user unless `opts` says otherwise. Register it after
 * the app.
 */
export function useUser(app: TestApp | { t: TestApp }, opts: Parameters<typeof createUser>[1] = {}): CreatedUser {
  return useBeforeAll('useUser', () => createUser('t' in app ? app.t : app, opts));
}
