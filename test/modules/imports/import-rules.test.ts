import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { useTestApp, useUser } from '../../helpers/fixtures.js';
import { visit } from '../../helpers/factories.js';
import { importCsv, itemOf } from './imports.helpers.js';

/** The blocklist of the hostile rows below: a name (and its subdomains), an IPv4 address, an IPv6 address, an IDN. */
function blockedHostsFile(): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'ferry-blocked-')), 'blocked.txt');
  writeFileSync(file, 'phish.example\n203.0.113.7\n[2001:db8::1]\nbücher.example\n');
  return file;
}

/**
 * SPEC §25: an imported link passes the rules the API applies to the same field, and no stored value can make a
 * read answer 500. Each row below once went in as it was (and broke reads, or escaped a rule).
 */
describe.each(engines)('imported rows meet the API rules on %s', (engine) => {
  const t = useTestApp(engine, { env: { BLOCKED_HOSTS_FILE: blockedHostsFile() } });
  const admin = useUser(t, { role: 'admin', status: 'active' });

  it('when a title has line breaks and tabs, then it is stored with spaces, and every read of the link and its owner answers', async () => {
    const job = await importCsv(
      t,
      admin.token,
      'url,code,title\nhttps://a.example/x,ttl1,"Scraped\r\ntitle\twith\u0007controls"\n',
    );
    expect(job).toMatchObject({ state: 'done', progress: { created: 1, failed: 0 } });
    for (const url of ['/api/v1/links/ttl1', '/api/v2/links/ttl1']) {
      const res = await t.request({ url, token: admin.token });
      expect(res.status, res.text).toBe(200);
      expect(res.body.title).toBe('Scraped  title with controls');
    }
    for (const url of [
      '/api/v1/users/me/links',
      '/api/v2/users/me/links',
      '/api/v1/links',
      '/api/v1/links/ttl1/stats',
      `/api/v1/users/${admin.id}/stats`,
    ]) {
      expect((await t.request({ url, token: admin.token })).status, url).toBe(200);
    }
  });

  it('when dates lie outside 1970-9999 or cannot be read, then that row fails naming its field and line, and the others come in', async () => {
    const job = await importCsv(
      t,
      admin.token,
      [
        'url,code,created_at,expires_at',
        'https://a.example/1,far1,,+200000-01-01T00:00:00Z',
        'https://a.example/2,old1,-000050-01-01T00:00:00Z,',
        'https://a.example/3,bad1,garbage-date,',
        'https://a.example/4,fine1,2020-01-01T00:00:00Z,',
      ].join('\n'),
    );
    expect(job).toMatchObject({ state: 'done', progress: { items: 4, created: 1, failed: 3 } });
    expect(itemOf(job, '/far1 (line 2)')).toMatchObject({
      outcome: 'failed',
      error_code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/expires_at/),
    });
    expect(itemOf(job, '/old1 (line 3)')).toMatchObject({
      outcome: 'failed',
      error_code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/created_at/),
    });
    expect(job.items.find((i) => i.source === 'line 4')).toMatchObject({
      outcome: 'failed',
      error_code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/garbage-date/),
    });
    expect((await t.request({ url: '/api/v1/links/fine1', token: admin.token })).status).toBe(200);
    expect((await t.request({ url: '/api/v1/users/me/links?limit=100', token: admin.token })).status).toBe(200);
  });

  it('when targets name blocked hosts in any spelling, then each row fails DESTINATION_BLOCKED and nothing redirects there', async () => {
    const job = await importCsv(
      t,
      admin.token,
      [
        'url,code',
        'https://login.phish.example/x,blk1',
        'http://203.0.113.7/x,blk2',
        'http://[2001:db8::1]/x,blk3',
        'https://xn--bcher-kva.example/x,blk4',
        'https://bücher.example/x,blk5',
        'https://fine.example/x,blk6',
      ].join('\n'),
    );
    expect(job.progress).toMatchObject({ items: 6, created: 1, failed: 5 });
    for (const code of ['blk1', 'blk2', 'blk3', 'blk4', 'blk5']) {
      expect(job.items.find((i) => i.source.startsWith(`/${code} `))).toMatchObject({
        outcome: 'failed',
        error_code: 'DESTINATION_BLOCKED',
      });
      expect((await visit(t, code)).status).toBe(404);
    }
  });

  it("when a row's domain names a member of every object (constructor, __proto__), then it fails that row, never the job", async () => {
    const job = await importCsv(
      t,
      admin.token,
      'url,code,domain\nhttps://a.example/c,obj1,constructor\nhttps://a.example/p,obj2,__proto__\nhttps://a.example/o,obj3,\n',
    );
    expect(job).toMatchObject({ state: 'done', progress: { items: 3, created: 1, failed: 2 } });
  });

  it('when a row points at this service (its base URL, or loopback on its port), then it fails like the API refuses it', async () => {
    const job = await importCsv(
      t,
      admin.token,
      `url,code\n${t.config.publicBaseUrl}/abc,self1\nhttp://127.0.0.1:${t.config.port}/abc,self2\nhttp://[::ffff:127.0.0.1]:${t.config.port}/x,self3\n`,
    );
    expect(job.progress).toMatchObject({ items: 3, failed: 3 });
    expect(job.items.map((i) => i.error_code)).toEqual(['VALIDATION_ERROR', 'VALIDATION_ERROR', 'VALIDATION_ERROR']);
    expect(job.items[0]!.message).toMatch(/original_url/);
  });

  it('when a row has a reserved code, refused tags and too many aliases, then the code fails it, and tags and aliases are cut and named', async () => {
    const aliases = Array.from({ length: 12 }, (_, i) => `many-${i}`).join('|');
    const job = await importCsv(
      t,
      admin.token,
      `url,code,tags,aliases\nhttps://a.example/r,api,,\nhttps://a.example/t,tag1,ok|Bad Tag|no_way|${'x'.repeat(40)},${aliases}\n`,
    );
    expect(itemOf(job, '/api (line 2)')).toMatchObject({ outcome: 'failed', error_code: 'VALIDATION_ERROR' });
    const tagged = itemOf(job, '/tag1 (line 3)');
    expect(tagged.outcome).toBe('created');
    expect(tagged.message).toMatch(/tags: tags that are not .*"x{40}"/);
    expect(tagged.message).toMatch(/aliases: only the first 10/);
    const link = await t.request({ url: '/api/v1/links/tag1', token: admin.token });
    expect(link.body.tags).toEqual(['ok', 'bad-tag', 'no-way']);
    expect(link.body.aliases).toHaveLength(10);
  });
});

/**
 * SPEC §25: a link goes on a domain only when the import's owner owns it (an admin owner may use any domain); and
 * "imported before" is per owner, so another owner's import of the same rows creates their links.
 */
describe.each(engines)('imports and who owns what on %s', (engine) => {
  const t = useTestApp(engine);
  const admin = useUser(t, { role: 'admin', status: 'active' });
  const alice = useUser(t);
  const bob = useUser(t);

  it("when bob's import has a row on alice's domain, then it fails DOMAIN_NOT_OWNED; an admin owner may use it", async () => {
    const domain = await t.request({
      method: 'POST',
      url: '/api/v1/domains',
      token: alice.token,
      payload: { hostname: 'go.alice.test' },
    });
    expect(domain.status, domain.text).toBe(201);
    await t.storage.db
      .updateTable('domains')
      .set({ verified_at: Date.now() })
      .where('id', '=', domain.body.id)
      .execute();
    const csv = 'url,code,domain\nhttps://evil.example/x,own1,go.alice.test\n';
    const asBob = await importCsv(t, admin.token, csv, `source=csv&owner=${bob.username}`);
    expect(asBob.items[0]).toMatchObject({ outcome: 'failed', error_code: 'DOMAIN_NOT_OWNED' });
    expect((await t.request({ url: '/api/v1/links/own1?domain=go.alice.test', token: admin.token })).status).toBe(404);
    const asAdmin = await importCsv(t, admin.token, csv, `source=csv&owner=${admin.username}`);
    expect(asAdmin.progress).toMatchObject({ created: 1, failed: 0 });
  });

  it("when another owner imports the same rows, then they get links of their own (not 'imported before')", async () => {
    const csv = 'url,title\nhttps://shared.example/one,One\nhttps://shared.example/two,Two\n';
    const first = await importCsv(t, admin.token, csv, `source=csv&owner=${alice.username}`);
    const again = await importCsv(t, admin.token, csv, `source=csv&owner=${alice.username}`);
    const other = await importCsv(t, admin.token, csv, `source=csv&owner=${bob.username}`);
    expect(first.progress).toMatchObject({ created: 2 });
    expect(again.progress).toMatchObject({ created: 0, unchanged: 2 });
    expect(other.progress).toMatchObject({ created: 2, unchanged: 0 });
    const bobs = await t.request({ url: '/api/v1/users/me/links?q=shared.example', token: bob.token });
    expect(bobs.body.data.map((l: { title: string }) => l.title).sort()).toEqual(['One', 'Two']);
  });
});
