import type { Server } from 'node:http';
import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** the whole answer as received (empty when the server closed without one) */
  text: string;
}

/**
 * Sends raw bytes on a fresh TCP connection and reads until the server closes it (or `timeoutMs`): for what
 * an HTTP client library will not send (a bad method, conflicting framing, control characters, resets).
 */
export function rawExchange(baseUrl: string, request: string | Buffer, timeoutMs = 5_000): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(request));
    const chunks: Buffer[] = [];
    const finish = (): void => {
      clearTimeout(timer);
      resolve(parseResponse(Buffer.concat(chunks).toString('utf8')));
    };
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', finish);
  });
}

/** The first response in `text` (status 0 when there is none). */
export function parseResponse(whole: string): RawResponse {
  // Interim 1xx answers (100 Continue to `Expect: 100-continue`) come before the response.
  let text = whole;
  while (/^HTTP\/1\.[01] 1\d\d /.test(text) && text.includes('\r\n\r\n'))
    text = text.slice(text.indexOf('\r\n\r\n') + 4);
  const end = text.indexOf('\r\n\r\n');
  if (!text.startsWith('HTTP/') || end === -1) return { status: 0, headers: {}, body: '', text };
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = headers['content-length'] !== undefined ? Number(headers['content-length']) : undefined;
  const rest = text.slice(end + 4);
  return {
    status: Number(statusLine!.split(' ')[1]),
    headers,
    body: length === undefined ? rest : rest.slice(0, length),
    text,
  };
}

/**
 * Connects, sends `request` (all or part of one) and resets the connection (TCP RST): at once, or with
 * `afterRequestOn`, once that server has parsed the request's head (its `request` event), so a route has it.
 */
export function sendAndReset(baseUrl: string, request: string, afterRequestOn?: Server): Promise<void> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(request, () => {
        if (!afterRequestOn) socket.resetAndDestroy();
      });
    });
    afterRequestOn?.once('request', () => setImmediate(() => socket.resetAndDestroy()));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
  });
}
