/**
 * The links module's public face: app.ts imports from here only. It owns link management — links, short codes,
 * aliases, bulk, export, QR, moderation, imports' way in — and depends on domains and users (hasher, repository)
 * through their index.ts. The visit is the redirect module's, which reads links and never the other way: this
 * instance's redirect cache reaches links only through the VisitCache port declared here; clicks reaches links
 * only through the LinkAccess port it declares.
 */
export { createLinksModule, linksModuleSchemas, type LinksModule, type LinksModuleDeps } from './links.module.js';
/** The rules a link's fields follow, for importers that bring links from elsewhere (modules/imports). */
export { checkOriginalUrl } from './original-url.js';
export { CODE_PATTERN, generateCode, isReservedCode, RESERVED_CODES } from './short-code.js';
export { tagsText } from './link-lists.js';
export { MAX_ALIASES, MAX_TAGS, MAX_TITLE_LENGTH, type Link } from './links.schemas.js';
export { ALIAS_PATTERN } from '../../lib/link-code.js';
export { LINK_CSV_COLUMNS } from './links.export.js';
export { NO_VISIT_CACHE, type VisitCache } from './visit-cache.js';
/** SPEC §21: a link's preview for unfurlers, as the redirect reads it from its row. */
export { previewOf, type LinkPreview } from './link-preview.js';
export type { LinkImports, NewImportedLink } from './link-imports.js';
export type {
  CheckedLink,
  ImportedLink,
  ImportedLinkCheck,
  ImportErrorCode,
  ImportFailure,
  ImportNote,
} from './imported-link-rules.js';
export type { DomainCode } from './link-batch.repository.js';
export { BLOCKED_HOST_REASON, type LinkModeration } from './link-moderation.js';
/** SPEC §21: a link's rules, compiled once by the redirect's cache and evaluated per visit. */
export {
  acceptedLanguages,
  chooseVariant,
  compileRules,
  firstMatch,
  RuleProbe,
  type CompiledRule,
  type CompiledRules,
  type CompiledSplit,
  type RuleInput,
  type RuleVisit,
} from './rules/index.js';
