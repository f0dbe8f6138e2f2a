import { domainToASCII } from 'node:url';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A host name as Ferry keeps it: ASCII (an internationalised name in its punycode form), lower case, without
 * a trailing dot. null when `raw` is not a host name of at least two labels (IP addresses, single labels and
 * anything with a port, a path or credentials are not domains).
 */
export function normalizeHostname(raw: string): string | null {
  const trimmed = raw.endsWith('.') ? raw.slice(0, -1) : raw;
  if (trimmed === '' || trimmed.length > 253 || /[^\p{L}\p{N}.-]/u.test(trimmed)) return null;
  const ascii = domainToASCII(trimmed);
  if (ascii === '' || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return null;
  // A last label of digits only is an IPv4 address (or half of one), never a registrable name.
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return null;
  return ascii;
}

/**
 * The host a request names (a Host or X-Forwarded-Host value), reduced to a key of the registry: lower case,
 * without port or trailing dot. Cheap on the common spellings: the redirect calls it on every visit.
 */
export function requestHostKey(host: string): string {
  let h = host;
  const colon = h.indexOf(':');
  if (colon !== -1) h = h.slice(0, colon);
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h.toLowerCase();
}
