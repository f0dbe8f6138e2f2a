import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/lib/app-error.js';
import { sharedSchemas } from '../../src/lib/common.schemas.js';
import { createIdempotencyRepository } from '../../src/modules/idempotency/idempotency.repository.js';
import { createIdempotencyService } from '../../src/modules/idempotency/idempotency.service.js';
import errorsPlugin from '../../src/plugins/errors.js';
import idempotencyPlugin from '../../src/plugins/idempotency.js';
import { engines } from '../helpers/app.js';
import { useTestApp } from '../helpers/fixtures.js';

/**
 * The layer on its own, as another module would use it: a small Fastify instance on the migrated test
 * database, with routes that opt in and do a write (a row in revoked_tokens) as their work.
 */
describe.each(engines)('the idempotency plugin on %s', (engine) => {
  const t = useTestApp(engine);
  let app: FastifyInstance;
  let runs = 0;

  const rows = async (jti: string) =>
    (await t.storage.db.selectFrom('revoked_tokens').selectAll().where('jti', '=', jti).execute()).length;
  const body = {
    type: 'object',
    required: ['jti'],
    properties: { jti: { type: 'string' } },
    additionalProperties: false,
  } as const;
  const response = { 201: { type: 'object', properties: { jti: { type: 'string' }, run: { type: 'integer' } } } };

  beforeAll(async () => {
    app = Fastify({ logger: false });
    for (const schema of sharedSchemas) app.addSchema(schema);
    app.decorateRequest('caller', null); // anonymous callers: the auth plugin is not part of this instance
    await app.register(errorsPlugin, { clock: t.clock });
    const idempotency = createIdempotencyService({
      repo: createIdempotencyRepository(t.storage.db),
      clock: t.clock,
      ttlSeconds: 3600,
    });
    await app.register(idempotencyPlugin, { idempotency });

    app.post<{ Body: { jti: string } }>(
      '/things',
      { config: { idempotency: 'optional' }, schema: { body, response } },
      async (request, reply) =>
        reply.sendIdempotent(async (tx) => {
          runs += 1;
          await (tx ?? t.storage.db)
            .insertInto('revoked_tokens')
            .values({ jti: `${request.body.jti}#${runs}`, expires_at: 1 })
            .execute();
          return {
            status: 201,
            headers: { location: `/things/${request.body.jti}` },
            body: { jti: request.body.jti, run: runs },
          };
        }),
    );
    app.post<{ Body: { jti: string } }>(
      '/fails-in-work',
      { config: { idempotency: 'required' }, schema: { body, response } },
      async (request, reply) =>
        reply.sendIdempotent(async (tx) => {
          await (tx ?? t.storage.db)
            .insertInto('revoked_tokens')
            .values({ jti: request.body.jti, expires_at: 1 })
            .execute();
          throw new AppError('CONFLICT', 'a business rule said no');
        }),
    );
    app.post<{ Body: { jti: string } }>(
      '/fails-before-work',
      { config: { idempotency: 'required' }, schema: { body, response } },
      async () => {
        throw new AppError('CONFLICT', 'refused before any work');
      },
    );
    app.post<{ Body: { jti: string } }>(
      '/loses-its-lock',
      { config: { idempotency: 'required' }, schema: { body, response } },
      async (request, reply) =>
        reply.sendIdempotent(async (tx) => {
          await (tx ?? t.storage.db)
            .insertInto('revoked_tokens')
            .values({ jti: request.body.jti, expires_at: 1 })
            .execute();
          // Another instance takes the key over while this request is still working (it outlived its lock).
          await (tx ?? t.storage.db)
            .updateTable('idempotency_keys')
            .set({ lock_id: randomUUID() })
            .where('idem_key', '=', String(request.headers['idempotency-key']))
            .execute();
          return { status: 201, headers: {}, body: { jti: request.body.jti } };
        }),
    );
    await app.ready();
  });
  afterAll(async () => app.close());

  const post = (url: string, jti: string, key?: string, ip = '127.0.0.1') =>
    app.inject({
      method: 'POST',
      url,
      remoteAddress: ip,
      payload: { jti },
      headers: key ? { 'idempotency-key': key } : {},
    });

  it('when an optional route is called without a key, then it just runs, every time', async () => {
    const a = await post('/things', `a-${randomUUID()}`);
    const b = await post('/things', `b-${randomUUID()}`);
    expect([a.statusCode, b.statusCode]).toEqual([201, 201]);
    expect(a.headers['idempotent-replayed']).toBeUndefined();
  });

  it('when an optional route is retried with a key by the same anonymous client, then it replays; from another IP, then it runs anew', async () => {
    const key = randomUUID();
    const jti = `c-${randomUUID()}`;
    const first = await post('/things', jti, key, '10.0.0.1');
    const replay = await post('/things', jti, key, '10.0.0.1');
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers.location).toBe(first.headers.location);
    expect(replay.json()).toEqual(first.json());
    // Another client's scope: the same key and the same request are unknown there, so the work runs again.
    const elsewhere = await post('/things', jti, key, '10.0.0.2');
    expect(elsewhere.statusCode).toBe(201);
    expect(elsewhere.headers['idempotent-replayed']).toBeUndefined();
    expect(elsewhere.json().run).toBe(first.json().run + 1);
  });

  it('when the work throws, then its writes roll back and the key is free for a retry at once', async () => {
    const key = randomUUID();
    const jti = `e-${randomUUID()}`;
    expect((await post('/fails-in-work', jti, key)).statusCode).toBe(409);
    expect(await rows(jti)).toBe(0);
    const again = await post('/fails-in-work', jti, key);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('CONFLICT'); // ran again, not IDEMPOTENCY_KEY_IN_USE
  });

  it('when the handler fails before its work, then the key is released too', async () => {
    const key = randomUUID();
    expect((await post('/fails-before-work', 'x', key)).statusCode).toBe(409);
    const keys = await t.storage.db.selectFrom('idempotency_keys').selectAll().where('idem_key', '=', key).execute();
    expect(keys).toEqual([]);
  });

  it('when a request loses its lock while working, then it answers 409 and its work is rolled back with the stored response (one transaction)', async () => {
    const jti = `f-${randomUUID()}`;
    const res = await post('/loses-its-lock', jti, randomUUID());
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(await rows(jti)).toBe(0);
  });

  it('when a required route gets no key, then 400 naming Idempotency-Key and the work does not run', async () => {
    const jti = `g-${randomUUID()}`;
    const res = await post('/fails-in-work', jti);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details[0].field).toBe('Idempotency-Key');
  });
});
