import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentPaginator } from '../../../src/lib/pagination.js';
import { openLinkModeration } from '../../../src/modules/links/index.js';
import { matchesBlocked, parseBlockedHosts } from '../../../src/modules/links/blocked-hosts.js';
import { createTestApp, engines, type TestApp } from '../../helpers/app.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createUser, type CreatedUser } from '../../helpers/factories.js';

/** SPEC §18: BLOCKED_HOSTS_FILE refuses links to listed hosts (and their subdomains); disable-blocked. */
describe('the blocked hosts list', () => {
  it('when a file is read, then comments, blank lines, case, trailing dots and *. are handled, names become punycode, and bad lines are reported', () => {
    const { hosts, problems } = parseBlockedHosts('# phishing\nEvil.Example.  \n\n*.tracker.test # wildcard spelling\nbücher.example\n10.0.0.1\nnot a host\nhttp://x/y\n');
    expect([...hosts].sort()).toEqual(['10.0.0.1', 'evil.example', 'tracker.test', 'xn--bcher-kva.example']);
    expect(problems.map((p) => p.line)).toEqual([7, 8]);
  });

  it('when a host is checked, then a listed name blocks itself and its subdomains only; an address only itself', () => {
    const hosts = new Set(['evil.example', '10.0.0.1', '2001:db8::1']);
    expect(matchesBlocked(hosts, 'evil.example')).toBe(true);
    expect(matchesBlocked(hosts, 'www.login.evil.example')).toBe(true);
    expect(matchesBlocked(hosts, 'EVIL.example.')).toBe(true);
    expect(matchesBlocked(hosts, 'notevil.example')).toBe(false);
    expect(matchesBlocked(hosts, 'example')).toBe(false);
    expect(matchesBlocked(hosts, '10.0.0.1')).toBe(true);
    expect(matchesBlocked(hosts, '1.10.0.0.1')).toBe(false);
    expect(matchesBlocked(hosts, '[2001:db8::1]')).toBe(true);
  });
});

describe.each(engines)('BLOCKED_HOSTS_FILE on %s', (engine) => {
  let dir: string;
  let file: string;
  let t: TestApp;
  let user: CreatedUser;
  let admin: CreatedUser;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ferry-blocked-'));
    file = path.join(dir, 'blocked-hosts.txt');
    writeFileSync(file, '# known phishing\nphish.example\n');
    t = await createTestApp(engine, { env: { BLOCKED_HOSTS_FILE: file } });
    user = await createUser(t);
    admin = await createUser(t, { role: 'admin' });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const create = (original_url: string, token = user.token) => t.request({ method: 'POST', url: '/api/v1/links', token, payload: { original_url } });

  it('when a link to a listed host or a subdomain of it is created, then 422 DESTINATION_BLOCKED naming original_url, also for an admin; other hosts are fine', async () => {
    expect(expectEnvelope(await create('https://phish.example/login'), 422, 'DESTINATION_BLOCKED')).toEqual(['original_url']);
    expectEnvelope(await create('https://WWW.Phish.Example./x'), 422, 'DESTINATION_BLOCKED');
    expectEnvelope(await create('http://a.b.phish.example:8080/'), 422, 'DESTINATION_BLOCKED');
    expectEnvelope(await create('https://phish.example/', admin.token), 422, 'DESTINATION_BLOCKED');
    expectEnvelope(await t.request({ method: 'POST', url: '/api/v1/links', payload: { original_url: 'https://phish.example/' } }), 422, 'DESTINATION_BLOCKED');
    expect(expectEnvelope(await t.request({ method: 'POST', url: '/api/v2/links', token: user.token, payload: { originalUrl: 'https://phish.example/' } }), 422, 'DESTINATION_BLOCKED')).toEqual(['originalUrl']);
    expect((await create('https://notphish.example/')).status).toBe(201);
  });

  it('when a bulk creation holds a blocked item, then that item alone is 422 and the others are created', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/links/bulk', token: user.token, payload: { links: [{ original_url: 'https://ok.example/' }, { original_url: 'https://m.phish.example/' }] } });
    expect(res.status).toBe(200);
    expect(res.body.data.map((d: { status: number }) => d.status)).toEqual([201, 422]);
    expect(res.body.data[1].error).toMatchObject({ code: 'DESTINATION_BLOCKED', details: [{ field: 'original_url' }] });
  });

  it('when a link is changed to point at a listed host, then 422 and it keeps its target', async () => {
    const link = (await create('https://fine.example/')).body;
    expectEnvelope(await t.request({ method: 'PATCH', url: `/api/v1/links/${link.short_code}`, token: user.token, payload: { original_url: 'https://phish.example/' } }), 422, 'DESTINATION_BLOCKED');
    expect((await t.request({ url: `/${link.short_code}` })).headers.location).toBe('https://fine.example/');
  });

  it('when the file changes and is read again, then the new list applies; an unreadable file keeps the list as it was', async () => {
    const link = (await create('https://later.example/a')).body;
    writeFileSync(file, 'phish.example\nlater.example\n');
    expect(await t.app.reloadBlockedHosts()).toBe(2);
    expectEnvelope(await create('https://later.example/b'), 422, 'DESTINATION_BLOCKED');
    rmSync(file);
    expect(await t.app.reloadBlockedHosts()).toBe(2);
    expectEnvelope(await create('https://later.example/c'), 422, 'DESTINATION_BLOCKED');
    // An existing link to a newly listed host still redirects until it is disabled (disable-blocked below).
    expect((await t.request({ url: `/${link.short_code}` })).status).toBe(302);

    // What `ferry links disable-blocked` runs: the service outside any request, on the same storage.
    writeFileSync(file, 'phish.example\nlater.example\n');
    const moderation = await openLinkModeration({
      config: t.config, storage: t.storage, paginator: deploymentPaginator(new Uint8Array(32)), clock: t.clock, log: t.app.log,
    });
    const count = await moderation.disableBlocked();
    expect(count).toBeGreaterThanOrEqual(1);
    expect(await moderation.disableBlocked()).toBe(0); // already disabled
    const record = await t.request({ url: `/api/v1/links/${link.short_code}`, token: admin.token });
    expect(record.body).toMatchObject({ disabled: true, disabled_reason: 'Its destination is on the blocked hosts list' });
    expect((await t.request({ url: '/api/v1/links?status=disabled', token: admin.token })).body.data.map((l: { short_code: string }) => l.short_code)).toContain(link.short_code);
  });
});

describe.each(engines)('BLOCKED_HOSTS_FILE at start-up on %s', (engine) => {
  it('when the file cannot be read, then start-up fails naming the variable and the file', async () => {
    // (No Redis: the start stops before a Redis client would have connected.)
    await expect(createTestApp(engine, { env: { BLOCKED_HOSTS_FILE: '/nonexistent/blocked.txt' }, redisUrl: '' })).rejects.toThrow(/BLOCKED_HOSTS_FILE=\/nonexistent\/blocked.txt cannot be read/);
  });
});
