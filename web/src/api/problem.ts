import type { ErrorEnvelope } from './client';
import { fieldWords, plainMessage } from './plain-words';

/**
 * A failed call, as the dashboard shows it: the envelope's message for the whole form or page, and its
 * details by field (in plain words: plain-words.ts), so each message can stand beside the field it is about
 * (Shlink's way).
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
    return {
      status,
      code: 'UNEXPECTED',
      message: `The server answered ${status} without an explanation`,
      fields: {},
      retryAfter,
    };
  }
  const fields: Record<string, string> = {};
  for (const d of body.error.details) {
    const said = plainMessage(d.field, d.message);
    fields[d.field] = fields[d.field] ? `${fields[d.field]}; ${said}` : said;
  }
  const message =
    status === 429 && retryAfter !== null ? `${body.error.message}: try again in ${retryAfter} s` : body.error.message;
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

/** What one item of a list field is called, for its messages ("tag 2: …"). */
const ITEM_NOUNS: Record<string, string> = { tags: 'tag', scopes: 'scope', aliases: 'alias', domains: 'domain' };

/** `3` → "tag 4" under tags (items count from 1 for people), a nested path in words. */
function itemWords(name: string, rest: string): string {
  const [first, ...more] = rest.split('.');
  const item = /^\d+$/.test(first!) ? `${ITEM_NOUNS[name] ?? 'item'} ${Number(first) + 1}` : fieldWords(first!);
  return [item, ...more.map(fieldWords)].join(' ');
}

/**
 * The messages about one form field, its items' included (`tags.2: may contain only …` stands beside Tags
 * as "tag 3: may contain only …"), or undefined when it has none.
 */
export function fieldMessage(problem: Problem | null, name: string): string | undefined {
  if (!problem) return undefined;
  const messages = Object.entries(problem.fields)
    .filter(([field]) => isUnder(field, name))
    .map(([field, message]) =>
      field === name ? message : `${itemWords(name, field.slice(name.length + 1))}: ${message}`,
    );
  return messages.length ? messages.join('; ') : undefined;
}

/** Messages of fields a form does not show, so that none is lost. */
export function otherFieldMessages(problem: Problem, shown: readonly string[]): string[] {
  return Object.entries(problem.fields)
    .filter(([field]) => !shown.some((name) => isUnder(field, name)))
    .map(([field, message]) => `${fieldWords(field)}: ${message}`);
}

/**
 * A form's message above its fields: for a refused input whose every message stands beside its field, a
 * pointer to them (not the envelope's "Request body is invalid"); messages about fields the form does not
 * show, in words; otherwise the envelope's message. Null when there is nothing to say.
 */
export function formMessage(problem: Problem | null, shown: readonly string[]): string | null {
  if (!problem) return null;
  const others = otherFieldMessages(problem, shown);
  const beside = Object.keys(problem.fields).length - others.length;
  if (problem.code !== 'VALIDATION_ERROR' || Object.keys(problem.fields).length === 0)
    return [problem.message, ...others].join('. ');
  const pointer =
    beside === 0
      ? null
      : beside === 1
        ? 'Please correct the field marked below.'
        : `Please correct the ${beside} fields marked below.`;
  return [pointer, ...others.map((o) => `${o.charAt(0).toUpperCase()}${o.slice(1)}.`)].filter(Boolean).join(' ');
}
