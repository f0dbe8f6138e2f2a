/** SPEC §22's events: how long they are kept (the stream resumes, and consumers catch up, within it). */
import type { TSchema } from 'typebox';
import { int } from '../lib/env-variables.js';

export const eventsVariables = {
  EVENTS_RETENTION_DAYS: int(
    7,
    1,
    365,
    'Days public events (SPEC §22: `link.created`, `link.clicked`, …) are kept: the live stream resumes (`Last-Event-ID`) within them; older ones are swept hourly',
  ),
} satisfies Record<string, TSchema>;
