import type { TSchema } from 'typebox';

/**
 * API v2's one breaking change (SPEC §9) is camelCase link fields. Rather than a second set of schemas and
 * handlers, v2 is a mapping at the edge: schemas are derived from v1's by renaming properties, response bodies
 * are renamed on the way out and request bodies on the way in.
 */
export const toCamel = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
export const toSnake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A deep copy of a JSON schema whose object property names (and `required`) are renamed; `$id` replaced. */
export function renameSchemaProperties<T extends TSchema>(
  schema: T,
  rename: (n: string) => string,
  $id?: string,
): TSchema {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === 'properties' && v && typeof v === 'object') {
        out.properties = Object.fromEntries(Object.entries(v).map(([p, s]) => [rename(p), walk(s)]));
      } else if (k === 'required' && Array.isArray(v)) {
        out.required = v.map((r) => rename(String(r)));
      } else if (k === 'examples' && Array.isArray(v)) {
        out.examples = v.map((e) => renameKeys(e, rename));
      } else if (k === '$ref' && typeof v === 'string' && $id) {
        out.$ref = v;
      } else {
        out[k] = walk(v);
      }
    }
    return out;
  };
  const copy = walk(schema) as Record<string, unknown>;
  if ($id) copy.$id = $id;
  else delete copy.$id;
  return copy as unknown as TSchema;
}

/**
 * Fields whose value is a document of someone else's format, kept verbatim in either version (SPEC §21's app
 * links: Apple's `appIDs` must not become `app_i_ds` on the way in). Only the field's own name is renamed.
 */
const VERBATIM_FIELDS = new Set([
  'apple_app_site_association',
  'appleAppSiteAssociation',
  'android_asset_links',
  'androidAssetLinks',
]);

/** Renames the keys of plain objects, deeply (arrays and nested objects too); values are untouched. */
export function renameKeys<T = unknown>(value: unknown, rename: (n: string) => string): T {
  if (Array.isArray(value)) return value.map((v) => renameKeys(v, rename)) as T;
  if (value === null || typeof value !== 'object') return value as T;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [rename(k), VERBATIM_FIELDS.has(k) ? v : renameKeys(v, rename)]),
  ) as T;
}
