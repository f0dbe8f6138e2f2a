import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerAndClose, chunkedBodyError, requestIdOrNew } from './client-errors.js';

/**
 * A chunked request body whose chunk size is larger than the body limit is answered 400 at once and the
 * connection closed (SPEC §17). Node's parser (llhttp) takes any chunk size that fits in 64 bits
 * (`FFFFFFFFFFFFFFFF`) and then waits for that many bytes, so such a request hung until the request timeout;
 * sizes that are not hexadecimal or overflow are refused by the parser itself (infra/client-errors.ts).
 *
 * The parser does not tell its chunk sizes, so the framing is followed here, beside it: the bytes the parser
 * is working on when the request arrives (its current buffer: the headers and what came with them), then,
 * for a chunked request only, every later read of the connection (a 'data' listener moves the parser off its
 * native read path for that connection). Once the last chunk and its trailers have passed, the scan stops.
 */

type State = 'size' | 'extension' | 'sizeEnd' | 'data' | 'dataCr' | 'dataLf' | 'trailer' | 'trailerEnd' | 'done';

const CR = 13;
const LF = 10;

function hexValue(byte: number): number {
  if (byte >= 48 && byte <= 57) return byte - 48;
  if (byte >= 65 && byte <= 70) return byte - 55;
  if (byte >= 97 && byte <= 102) return byte - 87;
  return -1;
}

/** Follows chunked framing byte by byte; says when a chunk is declared larger than `limit`. */
export class ChunkedScanner {
  private state: State = 'size';
  private size = 0;
  private digits = 0;
  private remaining = 0;
  private lineLength = 0;

  constructor(private readonly limit: number) {}

  /** 'oversized' as soon as a chunk size passes the limit; 'done' at the body's end or at bytes it cannot follow. */
  feed(buf: Buffer, from = 0): 'more' | 'oversized' | 'done' {
    for (let i = from; i < buf.length; i += 1) {
      const byte = buf[i]!;
      switch (this.state) {
        case 'size': {
          const digit = hexValue(byte);
          if (digit >= 0) {
            this.size = this.size * 16 + digit;
            this.digits += 1;
            if (this.size > this.limit) return 'oversized';
          } else if (this.digits > 0 && (byte === 59 || byte === 32 || byte === 9)) this.state = 'extension';
          else if (this.digits > 0 && byte === CR) this.state = 'sizeEnd';
          else return this.stop();
          break;
        }
        case 'extension':
          if (byte === CR) this.state = 'sizeEnd';
          break;
        case 'sizeEnd':
          if (byte !== LF) return this.stop();
          this.state = this.size === 0 ? 'trailer' : 'data';
          this.remaining = this.size;
          this.lineLength = 0;
          break;
        case 'data': {
          const take = Math.min(this.remaining, buf.length - i);
          this.remaining -= take;
          i += take - 1;
          if (this.remaining === 0) this.state = 'dataCr';
          break;
        }
        case 'dataCr':
          if (byte !== CR) return this.stop();
          this.state = 'dataLf';
          break;
        case 'dataLf':
          if (byte !== LF) return this.stop();
          this.state = 'size';
          this.size = 0;
          this.digits = 0;
          break;
        case 'trailer':
          if (byte === CR) this.state = 'trailerEnd';
          else this.lineLength += 1;
          break;
        case 'trailerEnd':
          if (byte !== LF || this.lineLength === 0) return this.stop();
          this.state = 'trailer';
          this.lineLength = 0;
          break;
        case 'done':
          return 'done';
      }
    }
    return 'more';
  }

  private stop(): 'done' {
    // The end of the trailers, or bytes the parser will refuse itself: nothing more to watch either way.
    this.state = 'done';
    return 'done';
  }
}

interface ParserWithBuffer {
  getCurrentBuffer?: () => Buffer;
}

/** Where this request's body starts in the parser's current buffer, or -1 when its head is not all there. */
function bodyStart(req: IncomingMessage, buffer: Buffer): number {
  const line = buffer.indexOf(`${req.method} ${req.url} HTTP/1.`, 0, 'latin1');
  if (line === -1) return -1;
  const end = buffer.indexOf('\r\n\r\n', line, 'latin1');
  return end === -1 ? -1 : end + 4;
}

function refuse(req: IncomingMessage, limit: number, now: number): void {
  const sent = req.headers['x-request-id'];
  answerAndClose(req.socket, chunkedBodyError(limit), requestIdOrNew(typeof sent === 'string' ? sent : undefined), now);
}

/**
 * Returns true when the request was refused (answered here: Fastify must not see it). A chunked request with
 * acceptable sizes so far goes on to Fastify, and its later reads are scanned as they arrive.
 */
export function guardChunkedBody(req: IncomingMessage, res: ServerResponse, limit: number, now: () => number): boolean {
  const te = req.headers['transfer-encoding'];
  if (te === undefined || !/(^|,)\s*chunked\s*$/i.test(te)) return false;
  const buffer = (req.socket as unknown as { parser?: ParserWithBuffer }).parser?.getCurrentBuffer?.();
  const start = buffer ? bodyStart(req, buffer) : -1;
  if (buffer === undefined || start === -1) return false;
  const scanner = new ChunkedScanner(limit);
  const first = scanner.feed(buffer, start);
  if (first === 'oversized') {
    refuse(req, limit, now());
    return true;
  }
  if (first === 'done') return false;
  const socket = req.socket;
  const onData = (chunk: Buffer) => {
    const result = scanner.feed(chunk);
    if (result === 'more') return;
    socket.off('data', onData);
    // Fastify is reading this body: the answer goes straight onto the socket, which closes, and the request
    // ends there (Fastify sees a client that went away).
    if (result === 'oversized' && !res.headersSent) refuse(req, limit, now());
  };
  socket.prependListener('data', onData);
  return false;
}
