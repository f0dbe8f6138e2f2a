import { SourceAccessError, SourceFormatError } from '../import-item.js';

/** What one answer of a source may cost (SPEC §25): IMPORT_MAX_RESPONSE_BYTES, and 30 s from asking to the last byte. */
export interface SourceLimits {
  maxResponseBytes: number;
  timeoutMs: number;
  /** the job's: a cancelled or stopped import aborts the request it waits for */
  signal?: AbortSignal | undefined;
}

/** SPEC §25's defaults: IMPORT_MAX_RESPONSE_BYTES' 10 MiB, and 30 s an answer. */
export const DEFAULT_SOURCE_LIMITS: SourceLimits = { maxResponseBytes: 10 * 1024 * 1024, timeoutMs: 30_000 };

/**
 * A source's marks of its visits, for sources with one log of them all (YOURLS): `after` the last whole run's
 * (only later visits need reading, besides the history of items not imported then), and `through` what this
 * run reads (set by the reader as it starts; kept once the run is done).
 */
export interface SourceMarks {
  after: string | null;
  through: string | null;
}

/** A source that answered more than the limit, or too slowly: the job fails, saying which. */
export class SourceLimitError extends SourceAccessError {}

const sizeOf = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB` : `${bytes} bytes`;

/** The body as text, read until `max` bytes; past it the request is aborted (nothing more is read or held). */
async function boundedText(response: Response, max: number, where: string, abort: () => void): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  const tooLarge = () =>
    new SourceLimitError(
      `${where} answered more than ${sizeOf(max)} (IMPORT_MAX_RESPONSE_BYTES): ask it for smaller pages, or raise the limit`,
    );
  if (declared > max) {
    abort();
    throw tooLarge();
  }
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of response.body ?? []) {
    size += part.byteLength;
    if (size > max) {
      abort();
      throw tooLarge();
    }
    parts.push(part);
  }
  return Buffer.concat(parts).toString('utf8');
}

/**
 * One GET of a source's JSON API. A refused key or an unknown path stops the import with the source's own
 * words (its status and the start of its body); a body that is not JSON is a format error; an answer larger
 * than the limit, or not complete within the time limit, stops it with a clear error (SPEC §25).
 */
export async function getSourceJson(
  url: URL,
  headers: Record<string, string>,
  limits: SourceLimits = DEFAULT_SOURCE_LIMITS,
): Promise<unknown> {
  const where = `${url.origin}${url.pathname}`;
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new SourceLimitError(`${where} did not answer within ${limits.timeoutMs / 1000} s`)),
    limits.timeoutMs,
  );
  try {
    let response: Response;
    try {
      const signal = limits.signal ? AbortSignal.any([controller.signal, limits.signal]) : controller.signal;
      response = await fetch(url, { headers: { accept: 'application/json', ...headers }, redirect: 'error', signal });
    } catch (error) {
      throw controller.signal.aborted
        ? controller.signal.reason
        : new SourceAccessError(`${url.origin} could not be reached: ${(error as Error).message}`);
    }
    let text: string;
    try {
      text = await boundedText(response, limits.maxResponseBytes, where, () => controller.abort());
    } catch (error) {
      throw controller.signal.aborted && !(error instanceof SourceLimitError) ? controller.signal.reason : error;
    }
    if (!response.ok) throw new SourceAccessError(`${where} answered ${response.status}: ${text.slice(0, 200)}`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new SourceFormatError(`${where} did not answer JSON`);
    }
  } finally {
    clearTimeout(timer);
  }
}

/** The API's base URL with a path appended (a base with a path prefix keeps it). */
export function apiUrl(base: string, path: string, query: Record<string, string | number | undefined> = {}): URL {
  const url = new URL(base.replace(/\/+$/, '') + path);
  for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
  return url;
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export const stringOrNull = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** `body[key]` as an array of objects, or a format error naming what was expected. */
export function arrayOfObjects(body: unknown, path: string[], source: string): Record<string, unknown>[] {
  let at: unknown = body;
  for (const key of path) at = isObject(at) ? at[key] : undefined;
  if (!Array.isArray(at) || !at.every(isObject))
    throw new SourceFormatError(`${source}: no ${path.join('.')} array in the answer`);
  return at;
}
