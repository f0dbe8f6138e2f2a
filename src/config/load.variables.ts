/**
 * The variables that bound load (SPEC §8): when requests are shed as overload, and how long a request's
 * headers, a whole request and a shutdown may take.
 */
import { getHeapStatistics } from 'node:v8';
import Type, { type TSchema } from 'typebox';
import { int } from '../lib/env-variables.js';

export const loadVariables = {
  // Overload bounds (plugins/overload.ts); 0 disables one. Event-loop utilisation is off by default: a loop that
  // is busy but still answers fast (a benchmark) runs near 1.0, so delay and heap are the default signals.
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: int(
    500,
    0,
    60_000,
    'Mean event-loop delay over a sample above which requests are shed with 503 (`0`: off)',
  ),
  OVERLOAD_MAX_ELU: Type.Number({
    default: 0,
    minimum: 0,
    maximum: 1,
    must: 'be a number between 0 and 1 (0 disables)',
    description: 'Event-loop utilisation above which requests are shed, e.g. `0.98` (`0`: off)',
  }),
  OVERLOAD_MAX_HEAP_BYTES: Type.Integer({
    default: Math.floor(getHeapStatistics().heap_size_limit * 0.9),
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    documentedDefault: "90 % of V8's heap limit",
    description: 'Used heap above which requests are shed (`0`: off)',
  }),
  OVERLOAD_SAMPLE_INTERVAL_MS: int(1000, 100, 60_000, 'How often the overload bounds are sampled'),
  SHUTDOWN_TIMEOUT_MS: int(
    25_000,
    100,
    600_000,
    'How long SIGTERM/SIGINT waits for in-flight requests before cutting them',
  ),
  HEADERS_TIMEOUT_MS: int(
    10_000,
    500,
    600_000,
    "A request's headers must arrive within this (slow-loris protection); at most `REQUEST_TIMEOUT_MS`",
  ),
  REQUEST_TIMEOUT_MS: int(30_000, 500, 3_600_000, 'A whole request (headers and body) must arrive within this'),
} satisfies Record<string, TSchema>;
