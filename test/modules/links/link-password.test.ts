import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { BROWSER_ACCEPT, clickRecords, createLink, HUMAN_UA, LINKS, patchLink, visit } from './links.helpers.js';

const PASSWORD = 'Tr0ub4dor&3-open';
const basic = (password: string, user = 'anyone') => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});
const formHeaders = (extra: Record<string, string> = {}) => ({
  'content-type': 'application/x-www-form-urlencoded',
  'user-agent': HUMAN_UA,
  ...extra,
});

describe.each(engines)('password-protected links on %s', (engine) => {
  const logLines: string[] = [];
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const t = useTestApp(engine, { env: { LINK_PASSWORD_ATTEMPTS_PER_MINUTE: '3' }, logStream });
  // A password needs an owner (SPEC §17: an anonymous link cannot have one).
  const owner = useUser(t);

  const post = (code: string, body: string, headers: Record<string, string> = {}, remoteAddress?: string) =>
    t.request({
      method: 'POST',
      url: `/${code}`,
      payload: body,
      headers: formHeaders(headers),
      ...(remoteAddress ? { remoteAddress } : {}),
    });

  it('when a link is created with a password, then has_password is true and no answer carries the password or its hash', async () => {
    const link = await createLink(t, { password: PASSWORD }, owner.token);
    const read = await t.request({ url: `${LINKS}/${link.short_code}`, token: owner.token });
    expect(read.body.has_password).toBe(true);
    for (const text of [JSON.stringify(link), read.text]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toMatch(/scrypt|password_hash|"password"/);
    }
    const row = await t.storage.db
      .selectFrom('links')
      .select('password_hash')
      .where('id', '=', link.id)
      .executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^scrypt\$\d+\$8\$1\$/);
  });

  it('when an API client visits without the password, then 401 LINK_PASSWORD_REQUIRED with a Basic challenge and no click', async () => {
    const link = await createLink(t, { password: PASSWORD }, owner.token);
    const res = await visit(t, link.short_code);
    expectEnvelope(res, 401, 'LINK_PASSWORD_REQUIRED');
    expect(res.headers['www-authenticate']).toMatch(/^Basic realm=/);
    expect(res.headers.location).toBeUndefined();
    expect(await clickRecords(t, link.id)).toHaveLength(0);
  });

  it('when the password comes as HTTP Basic credentials (any user name), then the redirect and one click; a wrong one is 401', async () => {
    const link = await createLink(t, { password: PASSWORD, original_url: 'https://example.com/secret' }, owner.token);
    const ok = await visit(t, link.short_code, basic(PASSWORD, 'whoever'));
    expect(ok.status).toBe(302);
    expect(ok.headers.location).toBe('https://example.com/secret');
    expect((await visit(t, link.short_code, basic(PASSWORD, ''))).status).toBe(302);
    const wrong = await visit(t, link.short_code, basic('not-the-password'));
    expectEnvelope(wrong, 401, 'LINK_PASSWORD_REQUIRED');
    expect(wrong.body.error.message).toMatch(/not right/);
    expect((await visit(t, link.short_code, { authorization: 'Basic %%%' })).status).toBe(401);
    const head = await t.request({ method: 'HEAD', url: `/${link.short_code}`, headers: basic(PASSWORD) });
    expect(head.status).toBe(302);
    expect(await clickRecords(t, link.id)).toHaveLength(2);
  });

  it('when a browser visits, then a self-contained 401 page with a password form that posts back, under a strict CSP', async () => {
    const link = await createLink(t, { password: PASSWORD }, owner.token);
    const res = await visit(t, `${link.short_code}?a=<script>alert(1)</script>`, { accept: BROWSER_ACCEPT });
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['www-authenticate']).toMatch(/^Form /); // not Basic: the browser shows the page, not its own dialog
    expect(res.text).toMatch(/<form method="post">/);
    expect(res.text).toMatch(/<input id="password" name="password" type="password"/);
    expect(res.text).not.toMatch(/script|action=|src=|https?:\/\//);
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  });

  it('when the form is posted with the password, then 303 to the target and a click; wrong or empty, the form again with 401', async () => {
    const link = await createLink(t, { password: PASSWORD, original_url: 'https://example.com/behind' }, owner.token);
    const ok = await post(link.short_code, `password=${encodeURIComponent(PASSWORD)}`, { accept: BROWSER_ACCEPT });
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe('https://example.com/behind');
    expect(ok.headers['cache-control']).toBe('private, no-store');
    const wrong = await post(link.short_code, 'password=nope-nope', { accept: BROWSER_ACCEPT });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toMatch(/That password is not right/);
    expect((await post(link.short_code, 'password=', { accept: BROWSER_ACCEPT })).status).toBe(401);
    expectEnvelope(await post(link.short_code, 'password=nope-nope'), 401, 'LINK_PASSWORD_REQUIRED');
    expect(await clickRecords(t, link.id)).toHaveLength(1);
  });

  it('when a protected link is visited through its alias, then the same form, the right password redirects, a wrong one is refused, and one click for the link notes the alias', async () => {
    const alias = `locked-${Math.random().toString(36).slice(2, 10)}`;
    const link = await createLink(
      t,
      { password: PASSWORD, original_url: 'https://example.com/aliased-secret', aliases: [alias] },
      owner.token,
    );
    const byCode = await visit(t, link.short_code, { accept: BROWSER_ACCEPT });
    const byAlias = await visit(t, alias, { accept: BROWSER_ACCEPT });
    expect(byAlias.status).toBe(401);
    expect(byAlias.text).toBe(byCode.text);
    for (const header of ['content-type', 'www-authenticate', 'content-security-policy', 'cache-control'])
      expect(byAlias.headers[header], header).toBe(byCode.headers[header]);
    expect(byAlias.text).toMatch(/<form method="post">/); // posts back to /{alias}
    expectEnvelope(await visit(t, alias), 401, 'LINK_PASSWORD_REQUIRED');

    const wrong = await post(alias, 'password=nope-nope', { accept: BROWSER_ACCEPT }, '198.51.100.20');
    expect(wrong.status).toBe(401);
    expect(wrong.text).toBe(
      (await post(link.short_code, 'password=nope-nope', { accept: BROWSER_ACCEPT }, '198.51.100.21')).text,
    );
    expect(wrong.text).toMatch(/That password is not right/);
    expectEnvelope(await visit(t, alias, basic('not-the-password')), 401, 'LINK_PASSWORD_REQUIRED');
    // The attempts are the link's, whichever name they came by: two wrong through the alias, one through the code.
    await post(alias, 'password=nope-again', {}, '198.51.100.20');
    await post(link.short_code, 'password=nope-and-again', {}, '198.51.100.20');
    expectEnvelope(
      await post(alias, `password=${encodeURIComponent(PASSWORD)}`, {}, '198.51.100.20'),
      429,
      'RATE_LIMITED',
    );

    const ok = await post(alias, `password=${encodeURIComponent(PASSWORD)}`, { accept: BROWSER_ACCEPT });
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe('https://example.com/aliased-secret');
    expect(ok.headers['cache-control']).toBe('private, no-store');
    const records = await clickRecords(t, link.id);
    expect(records.map((r) => [r.short_code, r.alias])).toEqual([[link.short_code, alias]]);
    const basicOk = await visit(t, alias, basic(PASSWORD));
    expect(basicOk.status).toBe(302);
    expect(basicOk.headers.location).toBe('https://example.com/aliased-secret');
    expect((await clickRecords(t, link.id)).map((r) => r.alias)).toEqual([alias, alias]);
    const read = await t.request({ url: `${LINKS}/${link.short_code}`, token: owner.token });
    expect(read.body.click_count).toBe(2);
  });

  it('when the form post is not a form, too large or has other fields, then 415, 413 or 400', async () => {
    const link = await createLink(t, { password: PASSWORD }, owner.token);
    const json = await t.request({ method: 'POST', url: `/${link.short_code}`, payload: { password: PASSWORD } });
    expectEnvelope(json, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectEnvelope(await post(link.short_code, `password=${'x'.repeat(5000)}`), 413, 'PAYLOAD_TOO_LARGE');
    expect(expectEnvelope(await post(link.short_code, 'password=a&user=b'), 400, 'VALIDATION_ERROR')).toEqual(['user']);
    expectEnvelope(await post('nOsUch77', 'password=x'), 404, 'NOT_FOUND');
    const plain = await createLink(t);
    expect((await post(plain.short_code, '')).status).toBe(303); // a link without a password: the form is a visit too
  });

  it('when wrong passwords reach the limit per link and address, then 429 with Retry-After, also for the right one; other addresses and links are not affected', async () => {
    const link = await createLink(t, { password: PASSWORD }, owner.token);
    const other = await createLink(t, { password: PASSWORD }, owner.token);
    for (let i = 0; i < 3; i += 1)
      expect((await visit(t, link.short_code, basic(`wrong-${i}`), '198.51.100.7')).status).toBe(401);
    const limited = await visit(t, link.short_code, basic(PASSWORD), '198.51.100.7');
    expectEnvelope(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const page = await t.request({
      method: 'POST',
      url: `/${link.short_code}`,
      payload: `password=${encodeURIComponent(PASSWORD)}`,
      headers: formHeaders({ accept: BROWSER_ACCEPT }),
      remoteAddress: '198.51.100.7',
    });
    expect(page.status).toBe(429);
    expect(page.text).toMatch(/Too many attempts/);
    expect((await visit(t, link.short_code, basic(PASSWORD), '198.51.100.8')).status).toBe(302);
    expect((await visit(t, other.short_code, basic(PASSWORD), '198.51.100.7')).status).toBe(302);
    // A right password is handed back: it never uses up an attempt.
    for (let i = 0; i < 5; i += 1)
      expect((await visit(t, other.short_code, basic(PASSWORD), '198.51.100.9')).status).toBe(302);
    expect(await clickRecords(t, link.id)).toHaveLength(1);
    if (engine === 'sqlite') {
      t.clock.advance(60_000); // the in-process window (Redis counts real time)
      expect((await visit(t, link.short_code, basic(PASSWORD), '198.51.100.7')).status).toBe(302);
    }
  });

  it('when the owner changes or removes the password, then the old one stops working at once', async () => {
    const link = await createLink(t, { password: PASSWORD }, owner.token);
    expect((await visit(t, link.short_code, basic(PASSWORD))).status).toBe(302);
    expect(
      (await patchLink(t, link.short_code, { password: 'another-secret-2' }, { token: owner.token })).body.has_password,
    ).toBe(true);
    expect((await visit(t, link.short_code, basic(PASSWORD))).status).toBe(401);
    expect((await visit(t, link.short_code, basic('another-secret-2'))).status).toBe(302);
    await patchLink(t, link.short_code, { password: null }, { token: owner.token });
    expect((await visit(t, link.short_code)).status).toBe(302);
  });

  it('when passwords travel through every path (create, patch, Basic, form, wrong, too short), then no log line and no error carries them', async () => {
    const secrets = ['first-secret-word-1', 'second-secret-word-2', 'wrong-secret-word-3', 'short'];
    const link = await createLink(t, { password: secrets[0] }, owner.token);
    await patchLink(t, link.short_code, { password: secrets[1] }, { token: owner.token });
    await visit(t, link.short_code, basic(secrets[1]!));
    await visit(t, link.short_code, basic(secrets[2]!));
    await post(link.short_code, `password=${secrets[2]}`);
    const tooShort = await patchLink(t, link.short_code, { password: secrets[3] }, { token: owner.token });
    expect(tooShort.status).toBe(400);
    expect(tooShort.text).not.toContain(`"${secrets[3]}"`);
    const bulk = await t.request({
      method: 'POST',
      url: `${LINKS}/bulk`,
      payload: { links: [{ original_url: 'https://example.com/b', password: secrets[3] }] },
    });
    expect(bulk.text).not.toContain(`"${secrets[3]}"`);
    await t.app.clickQueue.flush();
    const logged = logLines.join('\n');
    expect(logLines.length).toBeGreaterThan(0);
    for (const s of secrets.slice(0, 3)) expect(logged).not.toContain(s);
    expect(logged).not.toContain(Buffer.from(`anyone:${secrets[1]}`).toString('base64'));
  });
});
