/**
 * A tiny MaxMind DB (format 2.0, https://maxmind.github.io/MaxMind-DB/) for tests: IPv4 networks mapped to a
 * country code, written by hand, since no real GeoIP database can ship with the tests. 24-bit records.
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

/** `networks`: [CIDR like "203.0.113.0/24", ISO country code]. */
export function buildCountryMmdb(networks: Array<[string, string]>): Buffer {
  // The data section: one record per country.
  const data: Buffer[] = [];
  const offsets = new Map<string, number>();
  let size = 0;
  for (const [, code] of networks) {
    if (offsets.has(code)) continue;
    const record = map([['country', map([['iso_code', text(code)]])]]);
    offsets.set(code, size);
    data.push(record);
    size += record.length;
  }
  // The search tree: node 0 is the root; a record is a node, "no data" (= node count) or data (> node count).
  const nodes: Array<[number, number]> = [[-1, -1]];
  const leaves: Array<{ node: number; side: 0 | 1; code: string }> = [];
  for (const [cidr, code] of networks) {
    const [ip, bits] = cidr.split('/') as [string, string];
    const value = ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
    let node = 0;
    for (let depth = 0; depth < Number(bits); depth += 1) {
      const side = (Math.floor(value / 2 ** (31 - depth)) % 2) as 0 | 1;
      if (depth === Number(bits) - 1) leaves.push({ node, side, code });
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
    ['database_type', text('Ferry-Test-Country')],
    ['description', map([['en', text('test')]])],
    ['ip_version', uint(5, 4)],
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
