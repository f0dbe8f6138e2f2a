import type { ErrorEnvelope } from './client';

/**
 * A failed call, as the dashboard shows it: the envelope's message for the whole form or page, and its
 * details by field, so each message can stand beside the field it is about (Shlink's way).
 */
export interface Problem {
  status: number;
  code: string;
  message: string;
  fields: Record<string, string>;
  /** seconds, from Retry-After (429, 503) */
  retryAfter: number | null;
}

const isEnvelope = (body: unknown): body is ErrorEnvelope =>
  typeof body === 'object' && body !== null && typeof (body as { error?: { code?: unknown } }).error?.code === 'string';

export function problemFrom(body: unknown, response: Response | undefined): Problem {
  const status = response?.status ?? 0;
  const retry = Number(response?.headers.get('retry-after') ?? NaN);
  const retryAfter = Number.isFinite(retry) ? retry : null;
  if (!isEnvelope(body)) {
    return { status, code: 'UNEXPECTED', message: `The server answered ${status} without an explanation`, fields: {}, retryAfter };
  }
  const fields: Record<string, string> = {};
  for (const d of body.error.details) fields[d.field] = fields[d.field] ? `${fields[d.field]}; ${d.message}` : d.message;
  const message = status === 429 && retryAfter !== null ? `${body.error.message}: try again in ${retryAfter} s` : body.error.message;
  return { status, code: body.error.code, message, fields, retryAfter };
}

/** fetch itself failed: offline, server down, connection reset. */
export const networkProblem = (err: unknown): Problem => ({
  status: 0,
  code: 'NETWORK',
  message: `Cannot reach the server (${err instanceof Error ? err.message : String(err)})`,
  fields: {},
  retryAfter: null,
});

/** Whether a detail's field (`tags.2`, a body field's item) belongs to the form field `name`. */
const isUnder = (field: string, name: string): boolean => field === name || field.startsWith(`${name}.`);

/**
 * The messages about one form field, its items' included (`tags.2: must match …` stands beside Tags), or
 * undefined when it has none.
 */
export function fieldMessage(problem: Problem | null, name: string): string | undefined {
  if (!problem) return undefined;
  const messages = Object.entries(problem.fields)
    .filter(([field]) => isUnder(field, name))
    .map(([field, message]) => (field === name ? message : `${field.slice(name.length + 1)}: ${message}`));
  return messages.length ? messages.join('; ') : undefined;
}

/** Messages of fields a form does not show, so that none is lost. */
export function otherFieldMessages(problem: Problem, shown: readonly string[]): string[] {
  return Object.entries(problem.fields).filter(([field]) => !shown.some((name) => isUnder(field, name))).map(([field, message]) => `${field}: ${message}`);
}
