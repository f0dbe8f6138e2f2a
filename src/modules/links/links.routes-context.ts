import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiVersion } from '../../plugins/versioning.js';
import type { LinkModeration } from './link-moderation.js';
import type { LinksBulk } from './links.bulk.js';
import type { LinksExport } from './links.export.js';
import type { LinksService } from './links.service.js';
import type { LinkEdge } from './links.v2.js';

/**
 * What the groups of the links routes share (links.routes.ts registers them; link-qr.routes.ts and
 * user-links.routes.ts are two of them): a file of its own, so that a group needs nothing of the file that
 * registers it.
 */
export interface LinksRoutesOptions {
  links: LinksService;
  bulk: LinksBulk;
  exports: LinksExport;
  moderation: LinkModeration;
  basePath: string;
  version: ApiVersion;
}

/** The plugin's instance, its routes typed by their TypeBox schemas. */
export type LinksApp = Parameters<FastifyPluginAsyncTypebox<LinksRoutesOptions>>[0];

/** What each group of the links routes is registered with. */
export interface LinkRoutesContext {
  /** the version's edge: field names in, out and in errors */
  edge: LinkEdge;
  tags: string[];
  opts: LinksRoutesOptions;
}
