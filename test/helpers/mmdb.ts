/**
 * A tiny MaxMind DB (format 2.0, https://maxmind.github.io/MaxMind-DB/) for tests: networks mapped to a
 * country code, written by hand, since no real GeoIP database can ship with the tests (and no maintained npm
 * writer of the format exists). 24-bit records; MaxMind's or DB-IP Lite's record layout.
 */
function control(type: number, size: number): Buffer {
  if (size >= 29) throw new Error('mmdb: test values stay short');
  return type <= 7 ? Buffer.from([(type << 5) | size]) : Buffer.from([size, type - 7]);
}
const text = (s: string): Buffer => Buffer.concat([control(2, Buffer.byteLength(s)), Buffer.from(s)]);
const uint = (type: 5 | 6 | 9, n: number): Buffer => {
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return Buffer.concat([control(type, bytes.length), Buffer.from(bytes)]);
};
const map = (entries: Array<[string, Buffer]>): Buffer =>
  Buffer.concat([control(7, entries.length), ...entries.flatMap(([k, v]) => [text(k), v])]);
const array = (items: Buffer[]): Buffer => Buffer.concat([control(11, items.length), ...items]);

const bool = (b: boolean): Buffer => control(14, b ? 1 : 0);

/** The bits of a network's address, most significant first: 32 for IPv4, 128 for IPv6 (`::` expanded). */
function addressBits(ip: string): number[] {
  if (!ip.includes(':')) return ip.split('.').flatMap((o) => byteBits(Number(o)));
  const [head, tail = ''] = ip.split('::') as [string, string?];
  const groups = (t: string) => (t === '' ? [] : t.split(':'));
  const h = groups(head);
  const r = groups(tail);
  const all = ip.includes('::') ? [...h, ...Array<string>(8 - h.length - r.length).fill('0'), ...r] : h;
  return all.flatMap((g) => {
    const v = parseInt(g, 16);
    return [...byteBits(v >> 8), ...byteBits(v & 255)];
  });
}
const byteBits = (b: number): number[] => Array.from({ length: 8 }, (_, i) => (b >> (7 - i)) & 1);

/**
 * The record of a country as each database lays it out. MaxMind GeoLite2 Country: `country.iso_code` (and
 * more). DB-IP's "IP to Country Lite" mmdb (db-ip.com/db/lite): the same `country.iso_code`, plus `continent`
 * (code, names), `country.is_in_european_union` and `country.names`, in an IPv6 tree (IPv4 at ::/96) whose
 * database_type is `DBIP-Country-Lite`.
 */
export type MmdbLayout = 'test' | 'dbip';

const CONTINENTS: Record<string, [string, string]> = {
  NL: ['EU', 'Europe'],
  BE: ['EU', 'Europe'],
  DE: ['EU', 'Europe'],
  JP: ['AS', 'Asia'],
  US: ['NA', 'North America'],
  BR: ['SA', 'South America'],
};
const EU = new Set(['NL', 'BE', 'DE']);

function countryRecord(code: string, layout: MmdbLayout): Buffer {
  if (layout === 'test') return map([['country', map([['iso_code', text(code)]])]]);
  const [continent, continentName] = CONTINENTS[code] ?? ['EU', 'Europe'];
  return map([
    [
      'continent',
      map([
        ['code', text(continent)],
        ['geoname_id', uint(6, 6255148)],
        ['names', map([['en', text(continentName)]])],
      ]),
    ],
    [
      'country',
      map([
        ['geoname_id', uint(6, 2750405)],
        ['is_in_european_union', bool(EU.has(code))],
        ['iso_code', text(code)],
        ['names', map([['en', text(`Country ${code}`)]])],
      ]),
    ],
  ]);
}

/**
 * `networks`: [CIDR like "203.0.113.0/24" or "2001:db8::/32", ISO country code]. The `test` layout (the
 * default) is an IPv4 tree of `country.iso_code` records; `dbip` is DB-IP Lite's (IPv6 tree, IPv4 under ::/96,
 * its record layout and database type).
 */
export function buildCountryMmdb(networks: Array<[string, string]>, layout: MmdbLayout = 'test'): Buffer {
  const v6 = layout === 'dbip';
  // The data section: one record per country.
  const data: Buffer[] = [];
  const offsets = new Map<string, number>();
  let size = 0;
  for (const [, code] of networks) {
    if (offsets.has(code)) continue;
    const record = countryRecord(code, layout);
    offsets.set(code, size);
    data.push(record);
    size += record.length;
  }
  // The search tree: node 0 is the root; a record is a node, "no data" (= node count) or data (> node count).
  const nodes: Array<[number, number]> = [[-1, -1]];
  const leaves: Array<{ node: number; side: 0 | 1; code: string }> = [];
  for (const [cidr, code] of networks) {
    const [ip, bits] = cidr.split('/') as [string, string];
    const isV4 = !ip.includes(':');
    if (!v6 && !isV4) throw new Error('mmdb: the test layout is IPv4 only');
    const address = [...(v6 && isV4 ? Array<number>(96).fill(0) : []), ...addressBits(ip)];
    const prefix = Number(bits) + (v6 && isV4 ? 96 : 0);
    let node = 0;
    for (let depth = 0; depth < prefix; depth += 1) {
      const side = address[depth] as 0 | 1;
      if (depth === prefix - 1) leaves.push({ node, side, code });
      else {
        if (nodes[node]![side] === -1) {
          nodes.push([-1, -1]);
          nodes[node]![side] = nodes.length - 1;
        }
        node = nodes[node]![side];
      }
    }
  }
  const count = nodes.length;
  for (const leaf of leaves) nodes[leaf.node]![leaf.side] = count + 16 + offsets.get(leaf.code)!;
  const tree = Buffer.alloc(count * 6);
  nodes.forEach(([left, right], i) => {
    tree.writeUIntBE(left === -1 ? count : left, i * 6, 3);
    tree.writeUIntBE(right === -1 ? count : right, i * 6 + 3, 3);
  });
  const metadata = map([
    ['binary_format_major_version', uint(5, 2)],
    ['binary_format_minor_version', uint(5, 0)],
    ['build_epoch', uint(9, 1_700_000_000)],
    ['database_type', text(v6 ? 'DBIP-Country-Lite' : 'Ferry-Test-Country')],
    ['description', map([['en', text(v6 ? 'IP to Country Lite' : 'test')]])],
    ['ip_version', uint(5, v6 ? 6 : 4)],
    ['languages', array([text('en')])],
    ['node_count', uint(6, count)],
    ['record_size', uint(5, 24)],
  ]);
  return Buffer.concat([
    tree,
    Buffer.alloc(16),
    ...data,
    Buffer.from([0xab, 0xcd, 0xef]),
    Buffer.from('MaxMind.com'),
    metadata,
  ]);
}
