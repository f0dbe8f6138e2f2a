import Type from 'typebox';
import { AppError } from '../../lib/app-error.js';
import { negotiate } from '../../lib/accept.js';
import { errorResponses } from '../../lib/common.schemas.js';
import { securityFor } from '../../plugins/auth.js';
import { QR_FORMATS, QR_SIZE, type QrFormat } from './link-qr.js';
import type { LinkRoutesContext, LinksApp } from './links.routes-context.js';
import { domainQuery, LinkCodeParams } from './links.schemas.js';

const QrQuery = Type.Object({
  ...domainQuery,
  size: Type.Optional(
    Type.Integer({
      format: 'int32',
      minimum: QR_SIZE.min,
      maximum: QR_SIZE.max,
      default: QR_SIZE.default,
      description: `Width and height in pixels (${QR_SIZE.min}-${QR_SIZE.max})`,
    }),
  ),
  format: Type.Optional(
    Type.Union([Type.Literal('svg'), Type.Literal('png')], { description: 'svg or png; wins over Accept' }),
  ),
});
const QR_TYPES = Object.values(QR_FORMATS);
/** Far above the largest image (a 40-L symbol at 1,024 px: about 150 kB of PNG rows, 400 kB of SVG path). */
const QR_MAX_BYTES = 1_000_000;

/** GET /links/{code}/qr: the short URL as an image, in the format asked for. */
export function registerLinkQrRoute(app: LinksApp, { tags, opts: { links } }: LinkRoutesContext): void {
  app.get(
    '/links/:code/qr',
    {
      onRequest: app.access('optional', 'links:read'),
      schema: {
        operationId: 'getLinkQrCode',
        tags,
        security: securityFor('optional', 'links:read'),
        summary:
          'The short URL as a QR code (whoever may read the link): SVG by default, PNG for Accept: image/png or ?format=png',
        params: LinkCodeParams,
        querystring: QrQuery,
        response: {
          200: {
            description: 'The QR code of short_url (error correction M, 4-module quiet zone)',
            content: {
              [QR_FORMATS.svg]: {
                schema: Type.String({ maxLength: QR_MAX_BYTES, pattern: '^<svg ', description: 'An SVG document' }),
              },
              [QR_FORMATS.png]: {
                schema: Type.String({
                  format: 'binary',
                  maxLength: QR_MAX_BYTES,
                  description: 'A PNG image (1-bit grayscale)',
                }),
              },
            },
          },
          ...errorResponses(400, 401, 403, 404, 406, 429),
        },
      },
    },
    async (request, reply) => {
      const type = request.query.format
        ? QR_FORMATS[request.query.format]
        : negotiate(request.headers.accept, QR_TYPES);
      if (type === null)
        throw new AppError('NOT_ACCEPTABLE', `This resource is served as ${QR_TYPES.join(' or ')}`, [
          { field: 'Accept', message: `must accept ${QR_TYPES.join(' or ')}` },
        ]);
      const format = (Object.keys(QR_FORMATS) as QrFormat[]).find((f) => QR_FORMATS[f] === type)!;
      const image = await links.qr(
        request.params.code,
        request.caller,
        format,
        request.query.size ?? QR_SIZE.default,
        request.query.domain,
      );
      // (typed as the SVG's string by the type provider; a PNG is a Buffer, which Fastify sends as it is)
      return reply
        .header('vary', 'Accept')
        .type(type)
        .send(image as string);
    },
  );
}
