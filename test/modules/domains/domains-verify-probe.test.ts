import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../helpers/app.js';
import { createUser, login, type CreatedUser } from '../../helpers/factories.js';
import { freePort, waitFor } from '../../helpers/scale-out.js';
import {
  addDomain,
  domainTestApp,
  DOMAINS,
  startDomainWebServer,
  verifiedDomain,
  type CreatedDomain,
  type DomainTestApp,
} from './domains.helpers.js';

const DAY = 24 * 3_600_000;
const tokenOf = (domain: CreatedDomain): string => domain.verification.http_path.split('/').pop()!;
/** What a domain owner must never be shown: an internal address, a port, a system error. */
const internals = (port: number) =>
  new RegExp(`127\\.0\\.0\\.|::|10\\.0\\.0\\.|169\\.254|fd00|\\b${port}\\b|\\bE[A-Z]{4,}\\b|timed out|socket|refused`);
/** The words of a 422: its message and its details' messages. */
const wordsOf = (body: { error: { message: string; details: Array<{ message: string }> } }): string =>
  [body.error.message, ...body.error.details.map((x) => x.message)].join('\n');

/** SPEC §25 "Verification is no probe". */
describe.each(engines)('domain verification is no probe on %s', (engine) => {
  describe('with private addresses refused (the default)', () => {
    let d: DomainTestApp;
    let owner: CreatedUser;
    let port: number;
    beforeAll(async () => {
      port = await freePort();
      d = await domainTestApp(engine, { deps: { domainVerification: { httpPort: port } } });
      owner = await createUser(d.t, { status: 'active' });
    });
    afterAll(async () => d.close());

    it('when the name points at a loopback server that answers the token, then 422 "address not allowed", no connection', async () => {
      const domain = await addDomain(d.t, owner.token);
      const server = await startDomainWebServer('127.0.0.2', port, (_req, res) => res.end(tokenOf(domain)));
      try {
        d.dns.a.set(domain.hostname, '127.0.0.2');
        const res = await d.t.request({ method: 'POST', url: `${DOMAINS}/${domain.id}/verify`, token: owner.token });
        expect(res.status, res.text).toBe(422);
        const http = res.body.error.details.find((x: { field: string }) => x.field === 'http').message as string;
        expect(http).toBe(`http://${domain.hostname}${domain.verification.http_path}: address not allowed`);
        expect(server.connections()).toBe(0);
      } finally {
        await server.close();
      }
    });

    it.each([
      ['A', '10.0.0.1'],
      ['A', '169.254.169.254'],
      ['AAAA', 'fd00::1'],
      ['AAAA', '::ffff:127.0.0.1'],
    ] as const)(
      'when the name has the private address %s %s, then 422 "address not allowed", naming no address',
      async (type, address) => {
        const domain = await addDomain(d.t, owner.token);
        (type === 'A' ? d.dns.a : d.dns.aaaa).set(domain.hostname, address);
        const res = await d.t.request({ method: 'POST', url: `${DOMAINS}/${domain.id}/verify`, token: owner.token });
        expect(res.status).toBe(422);
        expect(res.body.error.details.find((x: { field: string }) => x.field === 'http').message).toMatch(
          /: address not allowed$/,
        );
        expect(wordsOf(res.body)).not.toMatch(internals(port));
      },
    );
  });

  describe('with private addresses allowed (DOMAIN_VERIFY_ALLOW_PRIVATE=true)', () => {
    let d: DomainTestApp;
    let owner: CreatedUser;
    let port: number;
    beforeAll(async () => {
      port = await freePort();
      d = await domainTestApp(engine, {
        env: { DOMAIN_VERIFY_ALLOW_PRIVATE: 'true' },
        deps: { domainVerification: { httpPort: port } },
      });
      owner = await createUser(d.t, { status: 'active' });
    });
    afterAll(async () => d.close());

    it('when nothing answers there, then the 422 and the re-check say "no answer", never an address, port or system error', async () => {
      const token = await login(d.t, owner.username, owner.password);
      const domain = await addDomain(d.t, token);
      d.dns.a.set(domain.hostname, '127.0.0.4'); // nothing listens there
      const res = await d.t.request({ method: 'POST', url: `${DOMAINS}/${domain.id}/verify`, token });
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([
        { field: 'dns', message: `TXT _ferry.${domain.hostname}: no TXT record` },
        { field: 'http', message: `http://${domain.hostname}${domain.verification.http_path}: no answer` },
      ]);
      expect(wordsOf(res.body)).not.toMatch(internals(port));

      d.dns.txt.set(domain.verification.txt_name, [domain.verification.txt_value]);
      expect((await d.t.request({ method: 'POST', url: `${DOMAINS}/${domain.id}/verify`, token })).status).toBe(200);
      d.dns.txt.set(domain.verification.txt_name, ['ferry-verification=someone-else']);
      d.t.clock.advance(DAY + 1);
      await d.t.app.runJob('domain-recheck');
      const record = await d.t.request({
        url: `${DOMAINS}/${domain.id}`,
        token: await login(d.t, owner.username, owner.password),
      });
      const url = `http://${domain.hostname}${domain.verification.http_path}`;
      expect(record.body.status_message).toBe(
        `TXT _ferry.${domain.hostname}: answered without the token; ${url}: no answer`,
      );
    });

    it('when the server there sends a byte every 4 s, then the check still ends at its 10 s deadline with "no answer"', async () => {
      const token = await login(d.t, owner.username, owner.password);
      const domain = await addDomain(d.t, token);
      const server = await startDomainWebServer('127.0.0.5', port, (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => res.write(' '), 4_000);
        res.on('close', () => clearInterval(timer));
      });
      try {
        d.dns.a.set(domain.hostname, '127.0.0.5');
        const started = Date.now();
        const res = await d.t.request({ method: 'POST', url: `${DOMAINS}/${domain.id}/verify`, token });
        const took = Date.now() - started;
        expect(res.status).toBe(422);
        expect(res.body.error.details[1].message).toMatch(/: no answer$/);
        expect(took).toBeGreaterThanOrEqual(9_000);
        expect(took).toBeLessThan(12_000);
      } finally {
        await server.close();
      }
    }, 30_000);
  });

  describe('re-checks', () => {
    let d: DomainTestApp;
    let owner: CreatedUser;
    let port: number;
    beforeAll(async () => {
      port = await freePort();
      const domainVerification = { httpPort: port, deadlineMs: 3_000 };
      d = await domainTestApp(engine, { env: { DOMAIN_VERIFY_ALLOW_PRIVATE: 'true' }, deps: { domainVerification } });
      owner = await createUser(d.t, { status: 'active' });
    });
    afterAll(async () => d.close());

    it("when one domain's server never answers, then the others' re-checks finish while it is still waiting", async () => {
      const silent = await startDomainWebServer('127.0.0.6', port, () => undefined);
      const quick = await startDomainWebServer('127.0.0.7', port, (_req, res) => res.writeHead(404).end());
      try {
        // The slow one is verified first, so that it is also the first one due.
        const slow = await verifiedDomain(d, owner.token);
        d.t.clock.advance(1);
        const others = [
          await verifiedDomain(d, owner.token),
          await verifiedDomain(d, owner.token),
          await verifiedDomain(d, owner.token),
        ];
        d.dns.txt.clear();
        d.dns.a.set(slow.hostname, '127.0.0.6');
        for (const o of others) d.dns.a.set(o.hostname, '127.0.0.7');
        d.t.clock.advance(DAY + 1);
        const token = await login(d.t, owner.username, owner.password);
        let jobDone = false;
        const job = d.t.app.runJob('domain-recheck').finally(() => {
          jobDone = true;
        });
        const statusOf = async (id: number) =>
          (await d.t.request({ url: `${DOMAINS}/${id}`, token })).body.status as string;
        const allFailing = async () =>
          (await Promise.all(others.map((o) => statusOf(o.id)))).every((s) => s === 'failing');
        await waitFor('the quick domains to be re-checked', allFailing, 5_000);
        expect(jobDone).toBe(false);
        expect(silent.open()).toBe(1); // the slow check is still waiting on its server
        expect(await statusOf(slow.id)).toBe('active');
        expect(await job).toBe(4);
        expect(await statusOf(slow.id)).toBe('failing');
      } finally {
        await silent.close();
        await quick.close();
      }
    });
  });
});
