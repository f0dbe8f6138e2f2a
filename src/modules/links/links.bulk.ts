import type { Transaction } from 'kysely';
import Type from 'typebox';
import type { Database, LinkRow } from '../../db/types.js';
import { AppError } from '../../lib/app-error.js';
import type { Caller } from '../../lib/caller.js';
import { ErrorEnvelopeSchema } from '../../lib/common.schemas.js';
import type { LinkDraft } from './link-input.js';
import type { LinkCreate } from './links.schemas.js';
import type { LinksService } from './links.service.js';

export const MAX_BULK_LINKS = 100;

/**
 * The body of POST /links/bulk. Its items are not validated as a whole: each one gets its own result, so one
 * bad item never blocks the others (SPEC §13). They are documented by the link body of the version.
 */
export const bulkBody = (linkCreateId: string) =>
  Type.Object(
    {
      links: Type.Array(
        Type.Unknown({
          description: `A link body as for POST /links (the ${linkCreateId} component). Each item is validated on its own: an invalid one gets its own 400 result`,
        }),
        { minItems: 1, maxItems: MAX_BULK_LINKS, description: `1-${MAX_BULK_LINKS} links, created in this order` },
      ),
    },
    {
      additionalProperties: false,
      examples: [
        {
          links: [
            { original_url: 'https://example.com/a' },
            { original_url: 'https://example.com/b', short_code: 'promo26' },
          ],
        },
      ],
    },
  );

/** One result per item, in input order: the created link, or the error that item alone met. */
export const bulkResultSchema = (linkId: string, $id: string) =>
  Type.Object(
    {
      data: Type.Array(
        Type.Union([
          Type.Object({ status: Type.Literal(201), link: Type.Ref(linkId) }, { additionalProperties: false }),
          Type.Object(
            {
              status: Type.Integer({
                format: 'int32',
                minimum: 400,
                maximum: 499,
                description: 'The status this item alone would have had',
              }),
              error: ErrorEnvelopeSchema.properties.error,
            },
            { additionalProperties: false },
          ),
        ]),
        { maxItems: MAX_BULK_LINKS },
      ),
    },
    { $id, additionalProperties: false },
  );

export type BulkOutcome = { status: 201; row: LinkRow } | { status: number; error: AppError };

/**
 * Bulk creation. Every item is checked and its password hashed first, in parallel and outside any
 * transaction; then the links are inserted one after the other, in input order (so that two items asking for
 * the same code have a deterministic winner), inside the request's transaction when it has an
 * Idempotency-Key: the whole batch and its per-item results are then stored as one response. An item's
 * conflict rolls back its own savepoint only (links.repository.ts insert).
 */
export function createLinksBulk(links: Pick<LinksService, 'prepare' | 'create' | 'assertMayCreate'>) {
  const failure = (err: unknown): AppError => {
    if (err instanceof AppError && err.status < 500) return err;
    throw err;
  };
  return {
    /** The caller's right to create is the whole request's: refused, no item is looked at. */
    prepareAll(items: Array<LinkCreate | AppError>, caller: Caller | null): Promise<Array<LinkDraft | AppError>> {
      links.assertMayCreate(caller);
      return Promise.all(
        items.map((item) => (item instanceof AppError ? item : links.prepare(item, caller).catch(failure))),
      );
    },

    async createAll(
      drafts: Array<LinkDraft | AppError>,
      caller: Caller | null,
      tx?: Transaction<Database>,
    ): Promise<BulkOutcome[]> {
      const outcomes: BulkOutcome[] = [];
      for (const draft of drafts) {
        if (draft instanceof AppError) {
          outcomes.push({ status: draft.status, error: draft });
          continue;
        }
        try {
          outcomes.push({ status: 201, row: await links.create(draft, caller, tx) });
        } catch (err) {
          const error = failure(err);
          outcomes.push({ status: error.status, error });
        }
      }
      return outcomes;
    },
  };
}

export type LinksBulk = ReturnType<typeof createLinksBulk>;
