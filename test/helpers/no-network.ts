import net from 'node:net';

/**
 * Tests talk to loopback only (the app on an ephemeral port, PostgreSQL, Redis). Any other destination is a
 * bug in a test or in the code, so it fails loudly instead of reaching out.
 */
const GUARDED = Symbol.for('ferry.test.loopback-only');

/**
 * Where a call of `net.Socket.prototype.connect` goes: its arguments as `(port, host)`, `(options)`, or the
 * `[options, callback]` array that `net.connect` and `http.request` pass once they have normalised theirs.
 */
export function connectTarget(args: unknown[]): { host?: string; port?: number; path?: string } {
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  if (typeof first === 'object' && first !== null) {
    const { host, port, path } = first as { host?: unknown; port?: unknown; path?: unknown };
    return {
      ...(typeof host === 'string' ? { host } : {}),
      ...(port === undefined || port === null ? {} : { port: Number(port) }),
      ...(typeof path === 'string' ? { path } : {}),
    };
  }
  return { port: Number(first), ...(typeof args[1] === 'string' ? { host: args[1] } : {}) };
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost|::ffff:127\.0\.0\.1)$/;
const proto = net.Socket.prototype as typeof net.Socket.prototype & { [GUARDED]?: true };

// Once per process: a worker that runs several test files runs this file before each of them.
if (!proto[GUARDED]) {
  const original = proto.connect;
  proto[GUARDED] = true;
  proto.connect = function connect(this: net.Socket, ...args: unknown[]) {
    const { host, path } = connectTarget(args);
    if (path === undefined && host !== undefined && !LOOPBACK.test(host)) {
      throw new Error(`Test tried to reach ${host}: only loopback is allowed`);
    }
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof net.Socket.prototype.connect;
}
