import net from 'node:net';

/**
 * Tests talk to loopback only (the app on an ephemeral port, PostgreSQL, Redis). Any other destination is a
 * bug in a test or in the code, so it fails loudly instead of reaching out.
 */
const GUARDED = Symbol.for('ferry.test.loopback-only');
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost|::ffff:127\.0\.0\.1)$/;
const proto = net.Socket.prototype as typeof net.Socket.prototype & { [GUARDED]?: true };

// Once per process: a worker that runs several test files runs this file before each of them.
if (!proto[GUARDED]) {
  const original = proto.connect;
  proto[GUARDED] = true;
  proto.connect = function connect(this: net.Socket, ...args: unknown[]) {
    const first = args[0] as { host?: string; path?: string } | number | string;
    const host =
      typeof first === 'object' && first !== null ? first.host : typeof args[1] === 'string' ? args[1] : undefined;
    const isPath = typeof first === 'object' && first !== null && typeof first.path === 'string';
    if (!isPath && host !== undefined && !LOOPBACK.test(host)) {
      throw new Error(`Test tried to reach ${host}: only loopback is allowed`);
    }
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof net.Socket.prototype.connect;
}
