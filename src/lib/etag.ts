import { AppError } from './app-error.js';

/**
 * Entity-tag comparison (RFC 9110 §8.8.3.2): strong or weak, over a list of tags or `*`. The conditional
 * plugin (plugins/conditional.ts) uses it for If-None-Match; services use assertIfMatch for their writes.
 */
export function etagMatches(header: string | undefined, etag: string, weak: boolean): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = (t: string): string => t.trim().replace(/^W\//, '');
  const target = weak ? opaque(etag) : etag;
  return header.split(',').some((candidate) => {
    const c = candidate.trim();
    if (!weak && c.startsWith('W/')) return false; // strong comparison never matches a weak tag
    return (weak ? opaque(c) : c) === target;
  });
}

/**
 * If-Match for writes (RFC 9110 §13.1.1): the method must not be performed when the tag is stale. Services
 * call this with the current representation's tag.
 */
export function assertIfMatch(ifMatch: string | undefined, currentEtag: string): void {
  if (ifMatch !== undefined && !etagMatches(ifMatch, currentEtag, false)) {
    throw new AppError('PRECONDITION_FAILED', 'If-Match does not match the current representation', [
      { field: 'If-Match', message: `the current ETag is ${currentEtag}` },
    ]);
  }
}
