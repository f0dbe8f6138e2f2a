/**
 * App links (SPEC §21): the two documents a host serves so that iOS and Android open its links in an app when it
 * is installed — Apple's `apple-app-site-association` (a JSON object) and Android's Digital Asset Links
 * `assetlinks.json` (a JSON array of statements). A domain carries its own (modules/domains), the default domain
 * the instance's (modules/instance); both check and store them here, as JSON text.
 */
import Type from 'typebox';
import type { ErrorDetail } from './app-error.js';

/** The stored names of the two documents (domains' columns, instance_settings' rows) and their well-known paths. */
export const APP_LINK_DOCUMENTS = {
  apple_app_site_association: '/.well-known/apple-app-site-association',
  android_asset_links: '/.well-known/assetlinks.json',
} as const;
export type AppLinkDocument = keyof typeof APP_LINK_DOCUMENTS;

/**
 * At most this many bytes each, as compact JSON (UTF-8): Apple reads at most 128 KB of the file, and real files
 * are a few KB; two of them fit in a request of the default BODY_LIMIT_BYTES (64 KiB).
 */
export const MAX_APP_LINK_BYTES = 32_768;
/** Nesting deeper than this is no app-links file (Apple's is four levels deep). */
export const MAX_APP_LINK_DEPTH = 16;

const SIZE_RULE = `at most ${MAX_APP_LINK_BYTES} bytes as compact JSON and ${MAX_APP_LINK_DEPTH} levels deep`;

/** Request and response alike: one schema of `type: [object, null]` (a wrong type is one detail, not one per branch). */
export const AppleAppSiteAssociation = Type.Unsafe<Record<string, unknown> | null>({
  type: ['object', 'null'],
  additionalProperties: true,
  description:
    `Apple's apple-app-site-association file (universal links), served verbatim as application/json at ` +
    `/.well-known/apple-app-site-association on this host; ${SIZE_RULE}. null: none (that path answers 404)`,
  examples: [{ applinks: { details: [{ appIDs: ['ABCDE12345.com.example.app'], components: [{ '/': '/*' }] }] } }],
});

export const AndroidAssetLinks = Type.Unsafe<Array<Record<string, unknown>> | null>({
  type: ['array', 'null'],
  items: { type: 'object', additionalProperties: true },
  maxItems: 1000,
  description:
    `Android's Digital Asset Links statements (app links), served verbatim as application/json at ` +
    `/.well-known/assetlinks.json on this host; ${SIZE_RULE}. null: none (that path answers 404)`,
  examples: [
    [
      {
        relation: ['delegate_permission/common.handle_all_urls'],
        target: {
          namespace: 'android_app',
          package_name: 'com.example.app',
          sha256_cert_fingerprints: [
            '14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5',
          ],
        },
      },
    ],
  ],
});

/** How deeply `value` nests, counted up to `limit + 1` (no deeper walk, so no deep recursion). */
function depthOf(value: unknown, limit: number): number {
  if (value === null || typeof value !== 'object') return 0;
  if (limit < 0) return 1;
  let deepest = 0;
  for (const v of Object.values(value)) {
    deepest = Math.max(deepest, depthOf(v, limit - 1));
    if (deepest > limit) break;
  }
  return deepest + 1;
}

/**
 * The document's stored form (compact JSON text), null to clear it, undefined when not sent; a document too
 * large or too deep is a detail naming `field` (the schema has checked its type).
 */
export function appLinkText(value: unknown, field: string, details: ErrorDetail[]): string | null | undefined {
  if (value === undefined || value === null) return value;
  if (depthOf(value, MAX_APP_LINK_DEPTH) > MAX_APP_LINK_DEPTH) {
    details.push({ field, message: `must be at most ${MAX_APP_LINK_DEPTH} levels deep` });
    return undefined;
  }
  const text = JSON.stringify(value);
  if (Buffer.byteLength(text) > MAX_APP_LINK_BYTES) {
    details.push({ field, message: `must be at most ${MAX_APP_LINK_BYTES} bytes as compact JSON` });
    return undefined;
  }
  return text;
}

/** A stored document as the API shows it (written by appLinkText only). */
export const appLinkValue = <T>(stored: string | null): T | null =>
  stored === null ? null : (JSON.parse(stored) as T);
