import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, engines, type TestApp } from '../helpers/app.js';

describe.each(engines)('the error envelope is bounded on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(engine);
  });
  afterAll(async () => t.close());

  it('when a body has thousands of unknown fields, then 400 lists the first 100 (as the document bounds it) and nothing is created', async () => {
    const payload: Record<string, unknown> = { username: 'bounded', email: 'bounded@example.com', password: 'long enough pw' };
    for (let i = 0; i < 2000; i += 1) payload[`extra${i}`] = i;
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload }); // also checked against maxItems
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details).toHaveLength(100);
    expect(res.body.error.details[0]).toEqual({ field: 'extra0', message: 'is not a field of this resource' });
    expect((await t.storage.db.selectFrom('users').select('id').where('username', '=', 'bounded').execute())).toEqual([]);
  });
});
