import { readFileSync } from 'node:fs';
import type { Server } from 'node:net';

/**
 * The accept queue of a listening socket: connections the kernel has completed (the client may already have
 * sent its request) that the event loop has not accepted yet. Closing the listener resets every one of them,
 * so a graceful shutdown (http-server.ts drainConnections) closes it only once the queue is empty, having
 * first made the kernel take no new connection: those are refused, never queued and then reset.
 */

/**
 * How many connections wait in the accept queue of the listener on `port` (Linux: the rx_queue of a LISTEN
 * socket in /proc/net/tcp and tcp6); null where that cannot be read.
 */
export function acceptQueueLength(port: number): number | null {
  let total: number | null = null;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'latin1');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      // sl local_address rem_address st tx_queue:rx_queue …; st 0A is LISTEN
      const fields = line.trim().split(/\s+/);
      if (fields[3] !== '0A' || !fields[1] || !fields[4]) continue;
      if (Number.parseInt(fields[1].slice(fields[1].lastIndexOf(':') + 1), 16) !== port) continue;
      total = (total ?? 0) + Number.parseInt(fields[4].split(':')[1] ?? '0', 16);
    }
  }
  return total;
}

/**
 * The kernel stops completing new connections on this listener (a backlog of 0: while one connection is
 * queued, new SYNs are dropped, and the client's retry finds the listener closed: refused). Node has no public
 * call for it; the listening handle's listen() sets the backlog of a socket that already listens.
 */
function stopNewConnections(server: Server): void {
  const handle = (server as unknown as { _handle?: { listen?: (backlog: number) => number } })._handle;
  handle?.listen?.(0);
}

/**
 * Calls `close` once the listener's accept queue is empty: at once when it is (or cannot be read), otherwise
 * right after the connection that empties it is accepted, or after `maxWaitMs` in any case.
 */
export function closeOnceAccepted(server: Server, maxWaitMs: number, close: () => void): void {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : null;
  const queued = (): number => (port === null ? 0 : (acceptQueueLength(port) ?? 0));
  // First, so that between the queue's check and the close at most one more connection can complete.
  stopNewConnections(server);
  if (queued() === 0) {
    close();
    return;
  }
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    server.off('connection', onConnection);
    clearTimeout(bound);
    close();
  };
  const onConnection = (): void => {
    if (queued() === 0) finish();
  };
  server.on('connection', onConnection);
  const bound = setTimeout(finish, maxWaitMs);
}
