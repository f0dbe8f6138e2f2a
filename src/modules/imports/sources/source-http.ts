import { SourceAccessError, SourceFormatError } from '../import-item.js';

const REQUEST_TIMEOUT_MS = 30_000;

/**
 * One GET of a source's JSON API. A refused key or an unknown path stops the import with the source's own
 * words (its status and the start of its body); a body that is not JSON is a format error.
 */
export async function getSourceJson(url: URL, headers: Record<string, string>): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json', ...headers },
      redirect: 'error',
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    throw new SourceAccessError(`${url.origin} could not be reached: ${(error as Error).message}`);
  }
  const text = await response.text();
  if (!response.ok) {
    throw new SourceAccessError(`${url.origin}${url.pathname} answered ${response.status}: ${text.slice(0, 200)}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SourceFormatError(`${url.origin}${url.pathname} did not answer JSON`);
  }
}

/** The API's base URL with a path appended (a base with a path prefix keeps it). */
export function apiUrl(base: string, path: string, query: Record<string, string | number | undefined> = {}): URL {
  const url = new URL(base.replace(/\/+$/, '') + path);
  for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
  return url;
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const stringOrNull = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** `body[key]` as an array of objects, or a format error naming what was expected. */
export function arrayOfObjects(body: unknown, path: string[], source: string): Record<string, unknown>[] {
  let at: unknown = body;
  for (const key of path) at = isObject(at) ? at[key] : undefined;
  if (!Array.isArray(at) || !at.every(isObject)) throw new SourceFormatError(`${source}: no ${path.join('.')} array in the answer`);
  return at;
}
