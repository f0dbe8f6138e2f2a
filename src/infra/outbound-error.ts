/**
 * Why an outbound request failed (outbound-http.ts). The message is written for the person who asked for the
 * request (a domain owner, a webhook's author): it says what happened in words that never name an address, a
 * port or a system error, so that Ferry cannot be used to look inside the network it runs in. What a log
 * needs (the address tried, the system's error code) is in `detail`, which must never reach a response.
 */
export type OutboundFailure =
  /** the URL is no absolute http(s) URL, or a redirect pointed at one */
  | 'bad-url'
  /** the name has no address (NXDOMAIN, or neither A nor AAAA records) */
  | 'no-address'
  /** DNS did not answer (timeout, SERVFAIL, refused) */
  | 'dns-failed'
  /** the name (or the literal) is a loopback, private, link-local, CGNAT, multicast, unspecified or reserved address */
  | 'address-not-allowed'
  /** the overall deadline passed (DNS, connect, TLS, headers and body together) */
  | 'timeout'
  /** no connection, or the connection was cut before a whole answer */
  | 'unreachable'
  /** the TLS handshake failed (certificate, protocol) */
  | 'tls'
  /** the peer answered something that is no HTTP response */
  | 'bad-response'
  /** the body is longer than the caller takes */
  | 'too-large'
  /** more redirects than the caller follows */
  | 'too-many-redirects'
  /** the caller's own signal stopped it (shutdown) */
  | 'cancelled';

const USER_TEXT: Record<OutboundFailure, string> = {
  'bad-url': 'not an http or https URL',
  'no-address': 'the name has no address',
  'dns-failed': 'DNS gave no answer',
  'address-not-allowed': 'address not allowed',
  timeout: 'no answer in time',
  unreachable: 'no answer',
  tls: 'the TLS handshake failed',
  'bad-response': 'no valid HTTP answer',
  'too-large': 'the answer is too large',
  'too-many-redirects': 'too many redirects',
  cancelled: 'cancelled',
};

export class OutboundError extends Error {
  override readonly name = 'OutboundError';

  /**
   * @param failure what went wrong, for the caller's decisions and its own wording
   * @param detail for the log only: the address tried, the system's error code; never shown to a user
   */
  constructor(
    readonly failure: OutboundFailure,
    readonly detail: string,
  ) {
    super(USER_TEXT[failure]);
  }
}

/** The failure a system error of a connection stands for (`code` of Node's errors). */
export function connectionFailure(err: unknown): OutboundFailure {
  const code = (err as { code?: string }).code ?? '';
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || code.includes('CERT') || code === 'EPROTO')
    return 'tls';
  if (code.startsWith('HPE_')) return 'bad-response';
  return 'unreachable';
}

/** A short line for the log: the system's code and message, without a stack. */
export const describeError = (err: unknown): string => {
  const e = err as { code?: string; message?: string };
  return [e.code, e.message].filter(Boolean).join(' ') || String(err);
};

/** A kept connection was found closed before the request got an answer (outbound-http.ts tries once more, anew). */
export class StaleConnection extends OutboundError {
  constructor() {
    super('unreachable', 'a kept connection was closed by the peer');
  }
}
