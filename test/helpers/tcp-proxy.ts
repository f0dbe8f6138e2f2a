import { once } from 'node:events';
import net from 'node:net';

/**
 * A TCP relay between the app and a server (the message bus) that a test can break the way networks and servers
 * break, without stopping a server other suites share: `cut` (the server went away: every connection is reset,
 * new ones are refused), `resume` (it is back, on the same port), `mute` (the open connections stay up but
 * nothing the server sends reaches the app any more: lost confirmations).
 */
export interface TcpProxy {
  port: number;
  /** connections relayed so far */
  readonly connections: number;
  cut(): Promise<void>;
  resume(): Promise<void>;
  mute(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  const muted = new WeakSet<net.Socket>();
  let connections = 0;
  const server = net.createServer((client) => {
    connections++;
    const upstream = net.connect(target.port, target.host);
    open.add(client).add(upstream);
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => {
      if (!muted.has(client)) client.write(d);
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    for (const s of [client, upstream]) {
      s.on('error', end);
      s.on('close', end);
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  const stop = async (): Promise<void> => {
    for (const s of open) s.resetAndDestroy();
    open.clear();
    if (server.listening) {
      server.close();
      await once(server, 'close');
    }
  };
  return {
    port,
    get connections() {
      return connections;
    },
    cut: stop,
    async resume() {
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
    mute() {
      for (const s of open) muted.add(s);
    },
    close: stop,
  };
}
