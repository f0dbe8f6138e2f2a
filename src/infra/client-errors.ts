import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { AppError, type ErrorDetail } from '../lib/app-error.js';
import { buildEnvelope } from '../lib/error-envelope.js';
import { MAX_TARGET_LENGTH } from '../lib/http-limits.js';

/**
 * Fastify's `clientErrorHandler` (the server's 'clientError' event): what Node's HTTP parser refuses before
 * any request exists — an unknown method, a request line or headers past the limit, Content-Length with
 * Transfer-Encoding or twice, a CR or NUL inside a header, a request that stalls — is answered with its 4xx,
 * the error envelope, X-Request-Id and `Connection: close` (SPEC §12), where the socket can still take it.
 * Fastify's default answers its own body. A client that reset its connection gets nothing and logs nothing
 * above debug: that is the client's business, not an error of the service.
 */

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@+=-]{1,128}$/;

/** The client's X-Request-Id when it is a sane one, else a new id (plugins/request-id.ts's rule). */
export const requestIdOrNew = (sent: string | undefined): string =>
  sent !== undefined && SAFE_REQUEST_ID.test(sent) ? sent : randomUUID();
const REQUEST_LINE = /^[A-Za-z]+ \S/;

/** Node's parser error (Fastify's ConnectionError types `rawPacket` as a serialised Buffer; it is a Buffer). */
interface ParserError extends Error {
  code?: string;
  rawPacket?: unknown;
}

/** The client's X-Request-Id, if the bytes that did arrive hold a sane one; else a new id. */
function requestIdOf(raw: string): string {
  return requestIdOrNew(/\r\nx-request-id:[ \t]*([^\r\n]*)/i.exec(raw)?.[1]?.trim());
}

const header = (field: string, message: string): ErrorDetail[] => [{ field, message }];

/** A chunked body whose framing cannot be followed, or whose chunk is larger than may be taken (chunked-body-guard.ts). */
export function chunkedBodyError(limit?: number): AppError {
  const rule =
    limit === undefined
      ? 'every chunk size must be a hexadecimal number'
      : `every chunk size must be a hexadecimal number of at most the body limit (${limit} bytes)`;
  return new AppError('VALIDATION_ERROR', 'The chunked request body is malformed', [
    { field: 'Transfer-Encoding', message: rule },
  ]);
}

/** The envelope's error for a parser error code (llhttp's HPE_* names, Node's ERR_HTTP_*). */
export function clientErrorToAppError(err: ParserError, raw: string): AppError {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('REQUEST_TIMEOUT', 'The request did not arrive in time');
    case 'HPE_HEADER_OVERFLOW': {
      const lineEnd = raw.indexOf('\r\n');
      if (REQUEST_LINE.test(raw) && (lineEnd === -1 || lineEnd > MAX_TARGET_LENGTH)) {
        return new AppError(
          'URI_TOO_LONG',
          `The request target is longer than ${MAX_TARGET_LENGTH} characters`,
          header('path', `must be at most ${MAX_TARGET_LENGTH} characters with its query`),
        );
      }
      return new AppError(
        'REQUEST_HEADERS_TOO_LARGE',
        'The request headers are larger than the server accepts (16 KiB)',
      );
    }
    case 'HPE_INVALID_METHOD':
      return new AppError(
        'VALIDATION_ERROR',
        'The request method is not one HTTP defines',
        header('method', 'must be an HTTP method such as GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS'),
      );
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
      return new AppError(
        'VALIDATION_ERROR',
        'The request framing is ambiguous',
        header(
          'Content-Length',
          `must appear at most once, as a decimal number, and never with Transfer-Encoding (${err.message.replace(/^Parse Error: /, '')})`,
        ),
      );
    case 'HPE_INVALID_CHUNK_SIZE':
      return chunkedBodyError();
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_LF_EXPECTED':
    case 'HPE_CR_EXPECTED':
      return new AppError(
        'VALIDATION_ERROR',
        'A request header is malformed',
        header('headers', 'must be name: value lines ending in CRLF, with no CR, LF or NUL inside a value'),
      );
    default:
      return new AppError('VALIDATION_ERROR', 'The request is not valid HTTP/1.1');
  }
}

export function createClientErrorHandler(now: () => number = Date.now) {
  return function clientErrorHandler(this: unknown, err: ParserError, socket: Socket): void {
    // A reset or an already closed socket: nothing to answer, nothing to report.
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || socket.destroyed || !socket.writable) {
      socket.destroy();
      return;
    }
    const raw = Buffer.isBuffer(err.rawPacket) ? err.rawPacket.toString('latin1') : '';
    const appError = clientErrorToAppError(err, raw);
    const requestId = requestIdOf(raw);
    (this as { log?: FastifyBaseLogger }).log?.debug(
      { requestId, code: err.code, reason: err.message },
      'client error',
    );
    // The parser cannot go on after its error: answer, then close (after the bytes are flushed).
    answerAndClose(socket, appError, requestId, now());
  };
}

/**
 * Writes the error envelope as a whole HTTP/1.1 response straight onto the socket, with `Connection: close`,
 * and destroys the socket once the bytes are out: for requests the HTTP layer cannot go on reading.
 */
export function answerAndClose(socket: Socket, appError: AppError, requestId: string, now: number): void {
  const body = JSON.stringify(buildEnvelope(appError, requestId, now));
  const head = [
    `HTTP/1.1 ${appError.status} ${statusText(appError.status)}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    'cache-control: no-store',
    'connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy());
}

function statusText(status: number): string {
  return (
    (
      {
        400: 'Bad Request',
        408: 'Request Timeout',
        414: 'URI Too Long',
        431: 'Request Header Fields Too Large',
      } as Record<number, string>
    )[status] ?? 'Bad Request'
  );
}
