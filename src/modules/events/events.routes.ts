import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Type, { type Static } from 'typebox';
import { isPublicEventType, PUBLIC_EVENT_TYPES, type StoredEvent } from '../../db/events.js';
import { negotiate } from '../../lib/accept.js';
import { AppError } from '../../lib/app-error.js';
import { isAdmin, type Caller } from '../../lib/caller.js';
import { errorResponses } from '../../lib/common.schemas.js';
import { securityFor } from '../../plugins/auth.js';
import type { EventHub } from './event-hub.js';
import { EventsQuery } from './events.schemas.js';

const SSE_TYPE = 'text/event-stream';
const EVENT_ID = /^evt_[A-Za-z0-9_-]{22}$/;

/** Who may hear of an event: its owner, or an admin (everything); an API key limited to domains hears of those. */
export function visibleTo(caller: Caller): (e: StoredEvent) => boolean {
  const admin = isAdmin(caller);
  const domains = caller.apiKey?.domains ?? null;
  return (e) => (admin || e.userId === caller.userId) && (domains === null || domains.includes(e.domainId ?? 0));
}

/** `?types=`: the types asked for (all when absent); an unknown one is a 400. */
function typesOf(list: string | undefined): ReadonlySet<string> | null {
  if (list === undefined) return null;
  const types = list.split(',');
  const unknown = types.filter((t) => !isPublicEventType(t));
  if (unknown.length)
    throw new AppError('VALIDATION_ERROR', `Unknown event type: ${unknown.join(', ')}`, [
      { field: 'types', message: `must list only ${PUBLIC_EVENT_TYPES.join(', ')}` },
    ]);
  return new Set(types);
}

type StreamRequest = FastifyRequest<{ Querystring: Static<typeof EventsQuery>; Headers: { 'last-event-id'?: string } }>;

/** Opens one subscriber's stream: negotiated, filtered, resumed, then fed by the hub until either side ends. */
async function stream(hub: EventHub, request: StreamRequest, reply: FastifyReply): Promise<void> {
  // asked for by name: a client that accepts anything (`*/*`) is not expecting an endless stream
  const accept = request.headers.accept ?? '';
  if (!accept.toLowerCase().includes(SSE_TYPE) || negotiate(accept, [SSE_TYPE]) === null)
    throw new AppError('NOT_ACCEPTABLE', 'The event stream is served as text/event-stream', [
      { field: 'Accept', message: 'must accept text/event-stream' },
    ]);
  const types = typesOf(request.query.types);
  const lastId = request.headers['last-event-id'];
  let after: number | null = null;
  if (lastId !== undefined && lastId !== '') {
    after = EVENT_ID.test(lastId) ? await hub.positionOf(lastId) : null;
    if (after === null)
      throw new AppError(
        'VALIDATION_ERROR',
        'Last-Event-ID names no event kept here (unknown, or past the retention)',
        [{ field: 'Last-Event-ID', message: 'is unknown or swept: reconnect without it to start from now' }],
      );
  }
  const maySee = visibleTo(request.caller!);
  const raw = reply.raw;
  reply.hijack();
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string | number | string[]>),
    'content-type': `${SSE_TYPE}; charset=utf-8`,
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  raw.write(': connected\n\n');
  let ended = false;
  const unsubscribe = await hub.subscribe(
    {
      ...(isAdmin(request.caller!) ? {} : { userId: request.caller!.userId }),
      accepts: (e) => maySee(e) && (types === null || types.has(e.event.type)),
      write: (chunk) => {
        if (!ended) raw.write(chunk);
        return !ended;
      },
      pending: () => raw.writableLength,
      end: (comment) => {
        if (ended) return;
        ended = true;
        raw.end(`: ${comment}\n\n`);
      },
    },
    after,
  );
  raw.on('close', () => {
    ended = true;
    unsubscribe();
  });
}

/** GET /events (SPEC §22): the caller's events as Server-Sent Events, live, resumable with Last-Event-ID. */
export const eventsRoutes: FastifyPluginAsyncTypebox<{ hub: EventHub }> = async (app, opts) => {
  const { hub } = opts;
  // Open streams end before the server closes, so they do not hold a graceful shutdown.
  app.addHook('preClose', async () => hub.close());

  app.get(
    '/events',
    {
      onRequest: app.access('user', 'links:read'),
      schema: {
        operationId: 'streamEvents',
        tags: ['events'],
        security: securityFor('user', 'links:read'),
        summary:
          "The caller's events, live (Server-Sent Events): a user's own links and domains, everything for an admin",
        description:
          "Ask with `Accept: text/event-stream` (else 406). Each message is `id: <event id>` and `data: <the event as JSON>` (the PublicEvent schema; each type's data is in the `webhooks` section); a comment (`: heartbeat`) every 15 s. " +
          'Resume with `Last-Event-ID: <the last id received>`: the events after it are sent first, within EVENTS_RETENTION_DAYS; an id that is unknown or swept is 400 VALIDATION_ERROR (events were lost: reconnect without it to start from now). ' +
          'An API key needs links:read. A client that reads too slowly is dropped with a final comment and resumes with Last-Event-ID.',
        querystring: EventsQuery,
        headers: Type.Object({
          'last-event-id': Type.Optional(
            Type.String({ maxLength: 64, pattern: '^[\\x21-\\x7e]*$', description: 'The last event id received' }),
          ),
        }),
        response: {
          200: {
            description: 'The stream: `id:` and `data:` lines per event, comments as heartbeats',
            content: {
              [SSE_TYPE]: {
                schema: Type.String({
                  maxLength: 1_000_000_000,
                  pattern: '^(:|id: |retry: )',
                  description: 'Server-Sent Events (never ends while the client listens)',
                }),
              },
            },
          },
          ...errorResponses(400, 401, 403, 406, 429),
        },
      },
    },
    (request, reply) => stream(hub, request as unknown as StreamRequest, reply),
  );
};
