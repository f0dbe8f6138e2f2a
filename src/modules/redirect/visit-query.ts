/**
 * The target with the visit's query string appended (forward_query, SPEC §13): `?` or `&` as needed, a
 * fragment stays last. Node's parser admits only printable ASCII in a request target; anything else (and
 * `#`) is percent-encoded all the same, so the Location stays a valid header and the query cannot start a
 * fragment.
 */
const percentEncoded = (c: string): string => {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `%${code.toString(16).toUpperCase().padStart(2, '0')}` : '%EF%BF%BD';
};

export function withForwardedQuery(target: string, query: string): string {
  if (query === '') return target;
  const safe = query.replace(/[^\x21\x22\x24-\x7e]/g, percentEncoded);
  const hash = target.indexOf('#');
  const base = hash === -1 ? target : target.slice(0, hash);
  const fragment = hash === -1 ? '' : target.slice(hash);
  const separator = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return `${base}${separator}${safe}${fragment}`;
}
