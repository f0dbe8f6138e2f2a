/**
 * The backup file's container: a POSIX ustar archive (gzip-compressed by the caller), so that an operator can
 * look inside one with `tar -tzf` and take it apart with `tar -xzf` without Ferry. Only what backups need:
 * regular files with a name of at most 100 bytes. A size past ustar's 8 GiB field is written in the base-256
 * form GNU tar and libarchive read.
 */

const BLOCK = 512;
const MAX_OCTAL_SIZE = 0o77777777777;

export interface TarEntry {
  name: string;
  size: number;
  mode: number;
  mtimeMs: number;
}

function writeOctal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'ascii');
}

/** The 512-byte header of a regular file. */
export function tarHeader(entry: TarEntry): Buffer {
  const name = Buffer.from(entry.name, 'utf8');
  if (name.length > 100) throw new Error(`archive entry name too long: ${entry.name}`);
  const block = Buffer.alloc(BLOCK);
  name.copy(block, 0);
  writeOctal(block, 100, 8, entry.mode & 0o7777);
  writeOctal(block, 108, 8, 0);
  writeOctal(block, 116, 8, 0);
  if (entry.size <= MAX_OCTAL_SIZE) writeOctal(block, 124, 12, entry.size);
  else {
    block[124] = 0x80;
    block.writeBigUInt64BE(BigInt(entry.size), 128);
  }
  writeOctal(block, 136, 12, Math.floor(entry.mtimeMs / 1000));
  block.fill(0x20, 148, 156); // the checksum is computed with its own field as spaces
  block.write('0', 156, 'ascii');
  block.write('ustar\u000000', 257, 'ascii');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return block;
}

/** Zeros that bring a file of `size` bytes to a whole number of blocks. */
export const tarPadding = (size: number): Buffer => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/** The archive's end: two zero blocks. */
export const tarEnd = (): Buffer => Buffer.alloc(2 * BLOCK);

function readNumber(block: Buffer, offset: number, length: number): number {
  if (block[offset]! & 0x80) return Number(block.readBigUInt64BE(offset + length - 8));
  const text = block
    .toString('ascii', offset, offset + length)
    .replace(/[\0 ]+$/, '')
    .trim();
  if (!/^[0-7]*$/.test(text)) throw new Error('not a tar archive (a header field is not a number)');
  return text === '' ? 0 : parseInt(text, 8);
}

/** Reads exactly n bytes at a time from a stream of chunks (null at its end). */
export class ByteReader {
  private buffered: Buffer[] = [];
  private length = 0;
  private readonly chunks: AsyncIterator<Buffer>;
  constructor(source: AsyncIterable<Buffer>) {
    this.chunks = source[Symbol.asyncIterator]();
  }

  /** The next n bytes; fewer only at the end of the stream. */
  async read(n: number): Promise<Buffer> {
    while (this.length < n) {
      const next = await this.chunks.next();
      if (next.done) break;
      this.buffered.push(next.value);
      this.length += next.value.length;
    }
    const all = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered);
    const out = all.subarray(0, Math.min(n, all.length));
    const rest = all.subarray(out.length);
    this.buffered = rest.length ? [rest] : [];
    this.length = rest.length;
    return out;
  }
}

/** Reads the next entry's header; null at the archive's end. Throws on anything but a regular file. */
export async function readTarHeader(reader: ByteReader): Promise<TarEntry | null> {
  const block = await reader.read(BLOCK);
  if (block.length < BLOCK) throw new Error('the archive ends early (truncated file?)');
  if (block.every((b) => b === 0)) return null;
  let sum = 0;
  for (let i = 0; i < BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  if (sum !== readNumber(block, 148, 8)) throw new Error('not a Ferry backup (a tar header checksum does not match)');
  const type = String.fromCharCode(block[156]!);
  const name = block.toString('utf8', 0, 100).replace(/\0.*$/s, '');
  if (type !== '0' && type !== '\0') throw new Error(`unexpected archive entry ${name} (type ${type})`);
  return {
    name,
    size: readNumber(block, 124, 12),
    mode: readNumber(block, 100, 8),
    mtimeMs: readNumber(block, 136, 12) * 1000,
  };
}
