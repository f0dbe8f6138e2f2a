import type { ErrorDetail } from './app-error.js';

/**
 * SPEC §12: malformed percent-encoding (`%ZZ`, a lone `%`, a cut `%E0%A4%A`, `%u0041`, bytes that are not
 * UTF-8) in the path or in any query parameter is a 400 naming the parameter, never an exception. Fastify's
 * query-string parser keeps such text as it is and the router reports only "bad URL", so the raw request
 * target is checked here once, before routing (plugins/versioning.ts rewriteUrl).
 */
export const PERCENT_ENCODING_RULE =
  'must be valid percent-encoding: each % starts an escape of two hex digits (e.g. %20), and the escapes form UTF-8';

function decodes(text: string): boolean {
  if (!text.includes('%')) return true;
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/** A query parameter's name as the client meant it (best effort when the name itself is malformed). */
function parameterName(raw: string): string {
  const spaced = raw.replace(/\+/g, ' ');
  return decodes(spaced) ? decodeURIComponent(spaced) : spaced;
}

/**
 * The offending parts of a raw request target (`/path?query`), one detail per parameter; empty when it is
 * well-formed. A malformed path is named `path` here; the router names the path parameter when it can.
 */
export function malformedPercentEncoding(url: string): ErrorDetail[] {
  if (!url.includes('%')) return [];
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const details: ErrorDetail[] = [];
  if (!decodes(path)) details.push({ field: 'path', message: PERCENT_ENCODING_RULE });
  if (q !== -1) {
    const seen = new Set<string>();
    for (const pair of url.slice(q + 1).split('&')) {
      if (!pair.includes('%')) continue;
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      const value = eq === -1 ? '' : pair.slice(eq + 1);
      if (decodes(name) && decodes(value)) continue;
      const field = parameterName(name) || 'query';
      if (seen.has(field)) continue;
      seen.add(field);
      details.push({ field, message: PERCENT_ENCODING_RULE });
    }
  }
  return details;
}
