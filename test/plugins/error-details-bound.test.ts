import { describe, expect, it } from 'vitest';
import { engines } from '../helpers/app.js';
import { useTestApp } from '../helpers/fixtures.js';

describe.each(engines)('the error envelope is bounded on %s', (engine) => {
  const t = useTestApp(engine);

  it('when a body has thousands of unknown fields, then 400 lists the first 100 (as the document bounds it) and nothing is created', async () => {
    const payload: Record<string, unknown> = {
      username: 'bounded',
      email: 'bounded@example.com',
      password: 'long enough pw',
    };
    for (let i = 0; i < 2000; i += 1) payload[`extra${i}`] = i;
    const res = await t.request({ method: 'POST', url: '/api/v1/users', payload }); // also checked against maxItems
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details).toHaveLength(100);
    expect(res.body.error.details[0]).toEqual({ field: 'extra0', message: 'is not a field of this resource' });
    expect(await t.storage.db.selectFrom('users').select('id').where('username', '=', 'bounded').execute()).toEqual([]);
  });

  it('when a field name holds control characters or is very long, or a message would echo a long URL, then the envelope shows them bounded', async () => {
    const long = 'f'.repeat(400);
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      payload: { username: 'ok_name', email: 'ok@example.com', password: 'long enough pw', 'a\u0001b': 1, [long]: 2 },
    });
    expect(res.status).toBe(400);
    const fields = res.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toContain('a\\u0001b');
    expect(fields).toContain(`${'f'.repeat(255)}…`);
    const junk = await t.request({ url: `/api/v1/users/${'%78'.repeat(3000)}` });
    expect(junk.status).toBeLessThan(500);
    expect(junk.body.error.message.length).toBeLessThanOrEqual(1024);
  });
});
