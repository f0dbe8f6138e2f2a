import http from 'node:http';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { connectTarget } from '../helpers/no-network.js';

/** The error `open` ends in: thrown at once, or emitted by what it returns. */
function failureOf(open: () => net.Socket | http.ClientRequest): Promise<Error> {
  try {
    const emitter = open();
    return new Promise((resolve) => emitter.once('error', resolve));
  } catch (err) {
    return Promise.resolve(err as Error);
  }
}

/** The tests' loopback guard (test/helpers/no-network.ts): every connection leaves through it. */
describe('the loopback guard of the tests', () => {
  it('when a connection is asked for in any of its forms, then its host, port or path is read', () => {
    expect(connectTarget([8080, '10.0.0.1'])).toEqual({ host: '10.0.0.1', port: 8080 });
    expect(connectTarget([{ host: '10.0.0.1', port: '443' }])).toEqual({ host: '10.0.0.1', port: 443 });
    expect(connectTarget([[{ host: '10.0.0.1', port: 80, path: null }, () => undefined]])).toEqual({
      host: '10.0.0.1',
      port: 80,
    });
    expect(connectTarget([{ path: '/run/app.sock' }])).toEqual({ path: '/run/app.sock' });
  });

  it('when net.connect or http.get names an address other than loopback, then the guard refuses it', async () => {
    // 0.0.0.0 is not loopback by name, yet a connection to it stays on this machine: were the guard to let it
    // through, the test would fail on ECONNREFUSED without a packet leaving.
    for (const open of [() => net.connect({ host: '0.0.0.0', port: 9 }), () => http.get('http://0.0.0.0:9/')]) {
      expect((await failureOf(open)).message).toBe('Test tried to reach 0.0.0.0: only loopback is allowed');
    }
  });
});
