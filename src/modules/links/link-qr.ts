import { promisify } from 'node:util';
import { crc32, deflate } from 'node:zlib';

export const QR_FORMATS = { svg: 'image/svg+xml', png: 'image/png' } as const;
export type QrFormat = keyof typeof QR_FORMATS;
export const QR_SIZE = { min: 64, max: 1024, default: 256 } as const;

/** The quiet zone around the symbol, in modules (ISO/IEC 18004 asks for 4). */
const MARGIN = 4;
const deflateAsync = promisify(deflate);

/**
 * A QR code image of `text` (SPEC §13: the short URL). The symbol — encoding, error correction (level M),
 * masking — comes from the `qrcode` library; both images are drawn here from that one matrix, so the SVG and
 * the PNG are the same code. The PNG is 1-bit grayscale and compressed on the thread pool: qrcode's own PNG
 * renderer (RGBA through pngjs, synchronously) held the event loop for 115 ms at 1024 px.
 */
export async function renderQr(text: string, format: QrFormat, size: number): Promise<string | Buffer> {
  const { default: QRCode } = await import('qrcode'); // loaded by the first QR code, not by every start
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const units = modules.size + 2 * MARGIN;
  const dark = (row: number, col: number): boolean => {
    const r = row - MARGIN;
    const c = col - MARGIN;
    return r >= 0 && c >= 0 && r < modules.size && c < modules.size && modules.get(r, c) === 1;
  };
  return format === 'svg' ? svgOf(units, dark, size) : pngOf(units, dark, size);
}

type Dark = (row: number, col: number) => boolean;

/** One path of horizontal runs of dark modules on a white square, scaled by the viewBox. */
function svgOf(units: number, dark: Dark, size: number): string {
  let d = '';
  for (let row = 0; row < units; row += 1) {
    for (let col = 0; col < units;) {
      if (!dark(row, col)) {
        col += 1;
        continue;
      }
      let end = col;
      while (end < units && dark(row, end)) end += 1;
      d += `M${col} ${row}h${end - col}v1h-${end - col}z`;
      col = end;
    }
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" ` +
    `viewBox="0 0 ${units} ${units}" shape-rendering="crispEdges">` +
    `<rect width="${units}" height="${units}" fill="#fff"/><path fill="#000" d="${d}"/></svg>`
  );
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(data, crc32(head.subarray(4))), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * PNG (RFC 2083), 1 bit per pixel, 0 = black. Pixel x shows module floor(x * units / size): whole modules
 * when the size allows, otherwise modules one pixel wider or narrower, which readers tolerate.
 */
async function pngOf(units: number, dark: Dark, size: number): Promise<Buffer> {
  const stride = 1 + Math.ceil(size / 8); // filter byte (0: none) + the row's bits
  const moduleAt = Array.from({ length: size }, (_, x) => Math.floor((x * units) / size));
  const rowOfModules = new Map<number, Buffer>();
  const raw = Buffer.alloc(stride * size);
  for (let y = 0; y < size; y += 1) {
    const row = moduleAt[y]!;
    let line = rowOfModules.get(row);
    if (line === undefined) {
      line = Buffer.alloc(stride);
      for (let x = 0; x < size; x += 1) {
        if (!dark(row, moduleAt[x]!)) line[1 + (x >> 3)]! |= 0x80 >> (x & 7);
      }
      rowOfModules.set(row, line);
    }
    line.copy(raw, y * stride);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([1, 0, 0, 0, 0], 8); // bit depth 1, grayscale, deflate, adaptive filtering, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', await deflateAsync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
