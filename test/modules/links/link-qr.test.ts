import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { engines, type ApiResponse } from '../../helpers/app.js';
import { useTestApp } from '../../helpers/fixtures.js';
import { expectEnvelope } from '../../helpers/expect-envelope.js';
import { createLink, LINKS } from './links.helpers.js';

// jsqr is CommonJS; under NodeNext its default export arrives wrapped (as ajv-formats' does).
type JsQr = typeof jsQRModule.default;
const jsQR = ((jsQRModule as unknown as { default?: JsQr }).default ?? jsQRModule) as unknown as JsQr;

/** The PNG's pixels as jsQR reads them, and the text it decodes. */
function decodePng(body: Buffer): {
  width: number;
  height: number;
  text: string | null;
  dark: (x: number, y: number) => boolean;
} {
  const png = PNG.sync.read(body);
  const code = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
  return {
    width: png.width,
    height: png.height,
    text: code?.data ?? null,
    dark: (x, y) => png.data[(y * png.width + x) * 4]! < 128,
  };
}

/**
 * A strict enough check that the SVG is well-formed XML: one root, every tag closed in order, attributes
 * quoted, no text outside tags.
 */
function assertWellFormedSvg(svg: string): void {
  const open: string[] = [];
  let rest = svg;
  while (rest.length) {
    const m = /^<(\/?)([a-zA-Z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/.exec(rest);
    expect(m, `malformed at: ${rest.slice(0, 40)}`).not.toBeNull();
    const [whole, closing, name, , selfClosing] = m!;
    if (closing) expect(open.pop()).toBe(name);
    else if (!selfClosing) open.push(name!);
    rest = rest.slice(whole.length);
    if (open.length === 0) expect(rest).toBe('');
  }
  expect(open).toEqual([]);
}

/** The module grid drawn by the SVG's path of runs (`M{x} {y}h{n}v1h-{n}z`). */
function svgGrid(svg: string): boolean[][] {
  const units = Number(/viewBox="0 0 (\d+) \1"/.exec(svg)![1]);
  const grid = Array.from({ length: units }, () => Array<boolean>(units).fill(false));
  for (const [, x, y, n] of svg.matchAll(/M(\d+) (\d+)h(\d+)v1h-\3z/g)) {
    for (let i = 0; i < Number(n); i += 1) grid[Number(y)]![Number(x) + i] = true;
  }
  return grid;
}

describe.each(engines)('GET /api/v1/links/{code}/qr on %s', (engine) => {
  const t = useTestApp(engine, { env: { PUBLIC_BASE_URL: 'https://fry.example' } });

  const qr = (
    code: string,
    query = '',
    headers: Record<string, string> = {},
    version = 1,
  ): Promise<ApiResponse & { raw: Buffer }> =>
    t.app.inject({ url: `/api/v${version}/links/${code}/qr${query}`, headers }).then(async (res) => {
      const checked = await t.request({ url: `/api/v${version}/links/${code}/qr${query}`, headers }); // the same request, checked against the document
      expect(checked.status).toBe(res.statusCode);
      return { ...checked, raw: res.rawPayload };
    });

  it('when asked with no preference, then an SVG of 256 px, well-formed, with ETag and private caching', async () => {
    const link = await createLink(t);
    const res = await qr(link.short_code);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(res.text).toMatch(
      /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="256" height="256" viewBox="0 0 \d+ \d+"/,
    );
    assertWellFormedSvg(res.text);
    expect(res.headers.etag).toBeDefined();
    expect(res.headers['cache-control']).toBe('private, no-cache');
    expect(res.headers.vary).toMatch(/Accept/);
    expect((await qr(link.short_code, '', { 'if-none-match': res.headers.etag as string })).status).toBe(304);
  });

  it('when a PNG is asked for (by Accept or ?format), then it decodes back to the short URL, at the size asked for', async () => {
    const link = await createLink(t);
    for (const [query, headers] of [
      ['', { accept: 'image/png' }],
      ['?format=png&size=512', {}],
      ['?size=1024', { accept: 'image/webp, image/png;q=0.9, image/svg+xml;q=0.5' }],
    ] as const) {
      const res = await qr(link.short_code, query, headers);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('image/png');
      const png = decodePng(res.raw);
      expect(png.text).toBe(`https://fry.example/${link.short_code}`);
      expect(png.width).toBe(/size=(\d+)/.exec(query)?.[1] ? Number(/size=(\d+)/.exec(query)![1]) : 256);
      expect(png.height).toBe(png.width);
    }
    expect(decodePng((await qr(link.short_code, '?format=png&size=64')).raw).width).toBe(64);
  });

  it('when the SVG and the PNG of a code are compared module by module, then they are the same matrix', async () => {
    const link = await createLink(t);
    const grid = svgGrid((await qr(link.short_code)).text);
    const units = grid.length;
    for (const size of [256, 333]) {
      const png = decodePng((await qr(link.short_code, `?format=png&size=${size}`)).raw);
      const sampled = grid.map((row, y) =>
        row.map((_, x) => png.dark(Math.floor(((x + 0.5) * size) / units), Math.floor(((y + 0.5) * size) / units))),
      );
      expect(sampled).toEqual(grid);
    }
    expect(grid.flat().filter(Boolean).length).toBeGreaterThan(100);
    expect(grid[0]!.some(Boolean)).toBe(false); // the quiet zone
  });

  it('when Accept names only what cannot be served, then 406; a bad size or format is 400; an unknown or expired code 404', async () => {
    const link = await createLink(t);
    expectEnvelope(await qr(link.short_code, '', { accept: 'image/jpeg' }), 406, 'NOT_ACCEPTABLE');
    expectEnvelope(await qr(link.short_code, '', { accept: 'application/json' }), 406, 'NOT_ACCEPTABLE');
    expect((await qr(link.short_code, '', { accept: 'image/*' })).headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect((await qr(link.short_code, '?format=svg', { accept: 'image/png' })).headers['content-type']).toMatch(
      /^image\/svg\+xml/,
    );
    for (const query of ['?size=63', '?size=1025', '?size=abc', '?format=gif'])
      expectEnvelope(await qr(link.short_code, query), 400, 'VALIDATION_ERROR');
    expectEnvelope(await qr('nOsUch55'), 404, 'NOT_FOUND');
    const expiring = await createLink(t, { expires_at: new Date(t.clock.now() + 1000).toISOString() });
    t.clock.advance(1000);
    expectEnvelope(await qr(expiring.short_code), 404, 'NOT_FOUND');
  });

  it('when HEAD or v2 is used, then the same image headers', async () => {
    const link = await createLink(t);
    const head = await t.request({ method: 'HEAD', url: `${LINKS}/${link.short_code}/qr?format=png` });
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('image/png');
    expect(head.text).toBe('');
    const v2 = await qr(link.short_code, '', {}, 2);
    expect(v2.status).toBe(200);
    expect(v2.text).toBe((await qr(link.short_code)).text);
  });
});
