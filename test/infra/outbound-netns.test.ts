import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compiledEntry } from '../helpers/child-process.js';
import { unless } from '../helpers/skip.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Why a network namespace of our own cannot be made here (root and unshare are needed), or null. */
const noNamespace = ((): string | null => {
  if (process.platform !== 'linux') return `needs Linux network namespaces; this is ${process.platform}`;
  const probe = spawnSync('unshare', ['-n', 'ip', 'link', 'set', 'lo', 'up'], { stdio: 'ignore' });
  return probe.status === 0 ? null : 'cannot make a network namespace here (unshare -n and ip, as root)';
})();

const SETUP = [
  'ip link set lo up',
  ...['203.0.113.10', '10.9.9.9', '169.254.9.9', '100.64.9.9', '192.168.9.9'].map((a) => `ip addr add ${a}/32 dev lo`),
  'ip -6 addr add fd00::9/128 dev lo nodad',
].join(' && ');

interface Outcome {
  url: string;
  failure?: string;
  status?: number;
  body?: string;
}

/**
 * SPEC §25: a refused request sends no packet. Inside a network namespace of its own (unshare -n) the private
 * addresses are on the loopback interface with listeners, so a connection attempt to any of them would be
 * seen; DNS there names them. The refused requests leave every private listener untouched, and the same
 * requests with private addresses allowed reach each one (the listeners would have seen a leak).
 */
describe.skipIf(noNamespace !== null)(
  unless(noNamespace, 'outbound requests in a network namespace of their own'),
  () => {
    it('when a literal, a DNS answer or a public redirect leads to a private address, then no connection reaches it', async () => {
      const child = path.join(here, 'outbound-netns.child.mjs');
      const script = `${SETUP} && exec "${process.execPath}" "${child}" "${compiledEntry('src/infra/outbound-http.ts')}"`;
      const out = await new Promise<string>((resolve, reject) => {
        execFile(
          'unshare',
          ['-n', 'sh', '-c', script],
          { timeout: 60_000, cwd: path.resolve(here, '../..') },
          (err, stdout, stderr) => {
            if (err) reject(new Error(`${err.message}\n${stderr}`));
            else resolve(stdout);
          },
        );
      });
      type Seen = Record<string, number>;
      type Result = { refused: Outcome[]; seenWhenRefused: Seen; control: Outcome[]; seen: Seen };
      const result = JSON.parse(out.trim().split('\n').pop()!) as Result;
      const redirects = result.refused.filter((r) => r.url.startsWith('http://public.test/'));
      expect(result.refused.length).toBe(26);
      for (const r of result.refused) expect(r, r.url).toEqual({ url: r.url, failure: 'address-not-allowed' });
      // The redirects' first hop is public and was asked (each answered 302); none of their second hops was.
      expect(result.seenWhenRefused).toEqual({
        '203.0.113.10': redirects.length,
        '10.9.9.9': 0,
        '169.254.9.9': 0,
        '100.64.9.9': 0,
        '192.168.9.9': 0,
        'fd00::9': 0,
        '127.0.0.1': 0,
      });
      for (const c of result.control) expect(c.status, JSON.stringify(c)).toBe(200);
      for (const [address, n] of Object.entries(result.seen))
        if (address !== '203.0.113.10') expect(n, address).toBeGreaterThan(0);
    });
  },
);
