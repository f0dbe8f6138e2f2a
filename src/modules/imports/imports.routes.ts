import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Readable } from 'node:stream';
import Type, { type Static } from 'typebox';
import { AppError } from '../../lib/app-error.js';
import { errorResponses } from '../../lib/common.schemas.js';
import { spoolCsvUpload } from './csv-upload.js';
import { ImportCreateSchema, ImportCsvQuery, ImportJobParams, type ImportCreate } from './imports.schemas.js';
import type { ImportRequest } from './import-context.js';
import type { ImportsService } from './imports.service.js';
import { jobView } from './import-job-view.js';
import type { ImportJobRow } from '../../db/types.js';

/** `FROM=TO` pairs (`?domain_map=`, repeated; the JSON body's map) as the import's map, in lower case like the source's names. */
const domainMapOf = (pairs: readonly string[] | undefined): Record<string, string> | undefined =>
  pairs && Object.fromEntries(pairs.map((pair) => pair.toLowerCase().split('=') as [string, string]));

/** A JSON request without a body (Content-Type application/json, nothing sent) names what is missing. */
const fromBody = (b: ImportCreate | undefined): ImportRequest => {
  if (b === undefined || b === null)
    throw new AppError('VALIDATION_ERROR', 'An import request needs a body', [
      { field: 'body', message: 'must be a JSON import request, or a CSV file with Content-Type text/csv' },
    ]);
  return fromJson(b);
};

const fromJson = (b: ImportCreate): ImportRequest => ({
  source: b.source,
  url: b.url,
  apiKey: b.api_key,
  database: b.database,
  tablePrefix: b.table_prefix,
  owner: b.owner,
  dryRun: b.dry_run,
  onConflict: b.on_conflict,
  domainMap: b.domain_map && domainMapOf(Object.entries(b.domain_map).map(([from, to]) => `${from}=${to}`)),
});

/** A CSV body, spooled to disk: its file is removed when the job ends, or at once if the job does not start. */
async function startCsvImport(
  imports: ImportsService,
  body: Readable,
  q: Static<typeof ImportCsvQuery>,
  userId: number,
): Promise<ImportJobRow> {
  const upload = await spoolCsvUpload(body);
  const started = imports.start(
    {
      source: q.source ?? 'csv',
      csv: upload.open(),
      owner: q.owner,
      dryRun: q.dry_run,
      onConflict: q.on_conflict,
      domainMap: domainMapOf(q.domain_map),
    },
    userId,
    () => void upload.remove(),
  );
  return started.catch(async (error: unknown) => {
    await upload.remove();
    throw error;
  });
}

/**
 * SPEC §20: the admin's import jobs. An admin may import from a private or loopback address (the source is
 * usually on the admin's own network); nobody else may start one. A CSV file comes as the body itself
 * (`text/csv`), streamed to disk, never held in memory.
 */
export const importsRoutes: FastifyPluginAsyncTypebox<{ imports: ImportsService; basePath: string }> = async (
  app,
  opts,
) => {
  const { imports } = opts;
  const tags = ['imports'];
  app.addContentTypeParser('text/csv', (_request, payload, done) => done(null, payload));

  app.post(
    '/imports',
    {
      onRequest: app.access('admin'),
      schema: {
        operationId: 'createImport',
        tags,
        summary:
          'Start an import from Shlink, Kutt, YOURLS, Bitly, Dub or a CSV file (admin); a CSV file may be the body (text/csv, ?source=)',
        description: 'Version 1 of the API only: the unversioned path asked for another version answers 404.',
        querystring: ImportCsvQuery,
        body: {
          description: 'A JSON import request, or with Content-Type text/csv the CSV file itself',
          content: {
            'application/json': { schema: ImportCreateSchema },
            'text/csv': { schema: { description: 'The CSV file, with a header row' } },
          },
        },
        response: {
          202: {
            ...Type.Ref('ImportJob'),
            description: 'The job, as it starts',
            headers: {
              Location: { type: 'string', format: 'uri-reference', maxLength: 64, description: '/api/v1/imports/{id}' },
            },
          },
          ...errorResponses(400, 401, 403, 404, 413, 415, 429),
        },
      },
    },
    async (request, reply) => {
      const isCsv = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() === 'text/csv';
      let job: ImportJobRow;
      if (isCsv) {
        job = await startCsvImport(imports, request.body as unknown as Readable, request.query, request.caller!.userId);
      } else {
        job = await imports.start(fromBody(request.body as ImportCreate | undefined), request.caller!.userId);
      }
      return reply.code(202).header('location', `${opts.basePath}/imports/${job.id}`).send(jobView(job));
    },
  );

  await jobRoutes(app, opts);
};

/** A job: its state (GET), and its cancellation (DELETE). */
const jobRoutes: FastifyPluginAsyncTypebox<{ imports: ImportsService }> = async (app, opts) => {
  const { imports } = opts;
  const tags = ['imports'];
  app.get(
    '/imports/:id',
    {
      onRequest: app.access('admin'),
      schema: {
        operationId: 'getImport',
        tags,
        summary: 'An import job: state, progress, counts and the items that were not simply created (admin)',
        params: ImportJobParams,
        response: {
          200: { ...Type.Ref('ImportJob'), description: 'The job' },
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const { job, items } = await imports.get(request.params.id);
      return reply.header('cache-control', 'private, no-cache').send(jobView(job, items));
    },
  );

  app.delete(
    '/imports/:id',
    {
      onRequest: app.access('admin'),
      schema: {
        operationId: 'cancelImport',
        tags,
        summary:
          'Cancel a running import (admin): it stops at its next transaction boundary, state `cancelled`; what it committed stays, every link whole',
        params: ImportJobParams,
        response: {
          200: {
            ...Type.Ref('ImportJob'),
            description:
              'The job once it stopped (`cancelled`), or still `running` if another instance has not stopped it within 15 s',
          },
          ...errorResponses(400, 401, 403, 404, 409, 429),
        },
      },
    },
    async (request, reply) => {
      const job = await imports.cancel(request.params.id);
      const { items } = await imports.get(job.id);
      return reply.header('cache-control', 'no-store').send(jobView(job, items));
    },
  );
};
