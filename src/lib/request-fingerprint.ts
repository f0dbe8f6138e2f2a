import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth, so that `{"a":1,"b":2}` and `{"b":2,"a":1}` are one request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const members = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export interface RequestShape {
  method: string;
  /** the route's path template, e.g. `/api/v1/orders` */
  route: string;
  params?: unknown;
  query?: unknown;
  body?: unknown;
}

/**
 * What "the same request" means for an Idempotency-Key (IETF draft-ietf-httpapi-idempotency-key-header §2.4;
 * Brandur's rocket-rides-atomic keeps method, path and params): method, route, path parameters, query and
 * the canonical body. Headers are not part of it (a retry may carry another request id or token).
 */
export function requestFingerprint(r: RequestShape): string {
  const text = canonicalJson({
    method: r.method.toUpperCase(),
    route: r.route,
    params: r.params ?? {},
    query: r.query ?? {},
    body: r.body ?? null,
  });
  return createHash('sha256').update(text).digest('hex');
}
