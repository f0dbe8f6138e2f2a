// Run by outbound-netns.test.ts inside a network namespace of its own (unshare -n), where the private
// addresses below are on the loopback interface: a packet Ferry sent to one would reach a listener here, so a
// listener that saw nothing proves that nothing was sent. Prints one JSON line: what each request came to and
// how many connections each listener saw.
import { createSocket } from 'node:dgram';
import { createServer } from 'node:http';
import process from 'node:process';
import { pathToFileURL, URL } from 'node:url';
import dnsPacket from 'dns-packet';

const { createOutboundHttp } = await import(pathToFileURL(process.argv[2]).href);

const PUBLIC = '203.0.113.10';
const PRIVATE = ['10.9.9.9', '169.254.9.9', '100.64.9.9', '192.168.9.9', 'fd00::9', '127.0.0.1'];
const seen = Object.fromEntries([PUBLIC, ...PRIVATE].map((a) => [a, 0]));

for (const address of [PUBLIC, ...PRIVATE]) {
  const server = createServer((req, res) => {
    const to = new URL(req.url, 'http://x').searchParams.get('to');
    if (to) res.writeHead(302, { location: to }).end();
    else res.end(`answered by ${address}`);
  });
  server.on('connection', () => {
    seen[address] += 1;
  });
  await new Promise((resolve) => server.listen(80, address, resolve));
}

// The names and what DNS answers for them.
const records = {
  'public.test': ['A', PUBLIC],
  'ten.test': ['A', '10.9.9.9'],
  'metadata.test': ['A', '169.254.9.9'],
  'cgnat.test': ['A', '100.64.9.9'],
  'home.test': ['A', '192.168.9.9'],
  'ula.test': ['AAAA', 'fd00::9'],
  'mapped.test': ['AAAA', '::ffff:127.0.0.1'],
};
const dns = createSocket('udp4');
dns.on('message', (message, peer) => {
  const query = dnsPacket.decode(message);
  const q = query.questions[0];
  const record = records[q.name.toLowerCase()];
  const answers = record && record[0] === q.type ? [{ type: q.type, name: q.name, ttl: 1, data: record[1] }] : [];
  const flags = dnsPacket.RECURSION_AVAILABLE | (record ? 0 : 3); // rcode 3: NXDOMAIN
  dns.send(
    dnsPacket.encode({ id: query.id, type: 'response', flags, questions: query.questions, answers }),
    peer.port,
    peer.address,
  );
});
await new Promise((resolve) => dns.bind(53, '127.0.0.1', resolve));

const http = createOutboundHttp({ dnsServers: ['127.0.0.1'] });
const attempt = async (url, allowPrivate) => {
  try {
    const res = await http.request({ url, allowPrivate, maxRedirects: 2, deadlineMs: 3_000, maxBodyBytes: 1024 });
    return { url, status: res.status, body: res.body.toString() };
  } catch (err) {
    return { url, failure: err.failure ?? String(err) };
  }
};

const targets = [
  ...PRIVATE.map((a) => (a.includes(':') ? `http://[${a}]/` : `http://${a}/`)),
  'http://[::ffff:10.9.9.9]/',
  ...['ten', 'metadata', 'cgnat', 'home', 'ula', 'mapped'].map((name) => `http://${name}.test/`),
];
// Through a redirect from a public address: each hop is resolved and checked.
const redirected = targets.map((t) => `http://public.test/?to=${encodeURIComponent(t)}`);

const refused = [];
for (const url of [...targets, ...redirected]) refused.push(await attempt(url, false));
const seenWhenRefused = { ...seen };
const control = [];
for (const url of [...targets, 'http://public.test/?to=http%3A%2F%2Fpublic.test%2F'])
  control.push(await attempt(url, true));
process.stdout.write(`${JSON.stringify({ refused, seenWhenRefused, control, seen })}\n`);
process.exit(0);
