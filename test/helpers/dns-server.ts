import { createSocket, type RemoteInfo } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import dnsPacket from 'dns-packet';

/**
 * A DNS server on loopback for domain verification (SPEC §19) and outbound requests (SPEC §25): it answers TXT,
 * A and AAAA records from its maps (names lower case, without the trailing dot; an A or AAAA entry may list
 * several addresses), NXDOMAIN for a name it has nothing for, and counts queries; a name in `silent` gets no
 * answer at all.
 * Tests point the app at it with DNS_SERVERS=127.0.0.1:<port>: nothing leaves the machine.
 */
export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for DNS_SERVERS */
  address: string;
  txt: Map<string, string[]>;
  a: Map<string, string | string[]>;
  aaaa: Map<string, string | string[]>;
  /** names whose queries are never answered (a DNS server that does not answer) */
  silent: Set<string>;
  queries: number;
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const socket = createSocket('udp4');
  const server: TestDnsServer = {
    address: '',
    txt: new Map(),
    a: new Map(),
    aaaa: new Map(),
    silent: new Set(),
    queries: 0,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
  socket.on('message', (message: Buffer, peer: RemoteInfo) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    server.queries += 1;
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    const answers: dnsPacket.Answer[] = [];
    if (question.type === 'TXT')
      for (const value of server.txt.get(name) ?? [])
        answers.push({ type: 'TXT', name: question.name, ttl: 1, data: value });
    if (server.silent.has(name)) return;
    const addresses = (map: Map<string, string | string[]>): string[] => [map.get(name) ?? []].flat();
    if (question.type === 'A')
      for (const data of addresses(server.a)) answers.push({ type: 'A', name: question.name, ttl: 1, data });
    if (question.type === 'AAAA') {
      for (const data of addresses(server.aaaa)) answers.push({ type: 'AAAA', name: question.name, ttl: 1, data });
    }
    const known = server.txt.has(name) || server.a.has(name) || server.aaaa.has(name);
    const reply = dnsPacket.encode({
      id: query.id,
      type: 'response',
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (known ? 0 : 3), // rcode 3: NXDOMAIN
      questions: query.questions ?? [],
      answers,
    });
    socket.send(reply, peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  server.address = `127.0.0.1:${(socket.address() as AddressInfo).port}`;
  return server;
}
