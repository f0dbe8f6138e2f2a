import { AppError, validationError } from '../../lib/app-error.js';
import { checkedAddress, literalAddress, type ResolveHost } from '../../infra/outbound-address.js';
import { OutboundError } from '../../infra/outbound-http.js';

/** How long creating a hook waits for DNS before it answers 503. */
const RESOLVE_DEADLINE_MS = 5_000;

export interface TargetCheck {
  resolve: ResolveHost;
  /** WEBHOOK_ALLOW_PRIVATE */
  allowPrivate: boolean;
}

/** A hook's URL: an absolute http(s) URL without credentials in it (SPEC §22: otherwise 400 VALIDATION_ERROR). */
export function parseHookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationError([{ field: 'url', message: 'must be an absolute http or https URL' }]);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw validationError([{ field: 'url', message: 'must be an http or https URL' }]);
  if (url.username || url.password)
    throw validationError([{ field: 'url', message: 'must not carry a user name or password' }]);
  return url;
}

/**
 * SPEC §22 "no webhook reaches inside", at creation: every address the host resolves to is checked (the same
 * check the outbound module makes at each delivery, infra/outbound-address.ts); one inside is 422
 * WEBHOOK_TARGET_FORBIDDEN. A name without address is the caller's mistake (400); DNS that does not answer, ours (503).
 */
export async function checkHookTarget(raw: string, check: TargetCheck): Promise<void> {
  const url = parseHookUrl(raw);
  try {
    const literal = literalAddress(url.hostname);
    const addresses =
      literal !== null ? [literal] : await check.resolve(url.hostname, AbortSignal.timeout(RESOLVE_DEADLINE_MS));
    checkedAddress(url.hostname, addresses, check.allowPrivate);
  } catch (err) {
    if (!(err instanceof OutboundError)) throw err;
    if (err.failure === 'address-not-allowed') {
      throw new AppError(
        'WEBHOOK_TARGET_FORBIDDEN',
        'The URL points inside: its host resolves to a loopback, private, link-local, CGNAT, multicast or unspecified address',
        [{ field: 'url', message: 'resolves to an address that is not allowed' }],
      );
    }
    if (err.failure === 'no-address') throw validationError([{ field: 'url', message: 'its host has no address' }]);
    throw new AppError('SERVICE_UNAVAILABLE', 'The URL could not be resolved now; try again', [], {
      'Retry-After': '5',
    });
  }
}
