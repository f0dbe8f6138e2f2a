/**
 * One OpenAPI document per API version, for the version selector of /docs: the complete document
 * (`/v3/api-docs`, what clients and the tests validate against) cut down to `/api/vN/...` plus the
 * unversioned operations (the redirect, health), with only the components those operations reach.
 */
interface Doc {
  paths?: Record<string, unknown>;
  tags?: Array<{ name: string }>;
  components?: Record<string, Record<string, unknown> | undefined>;
  info?: Record<string, unknown>;
  [key: string]: unknown;
}

const VERSIONED = /^\/api\/v(\d+)\//;

/** Every `#/components/<kind>/<name>` reachable from `root`, following references inside components too. */
function reachableComponents(root: unknown, components: Doc['components']): Set<string> {
  const seen = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/') && !seen.has(v)) {
        seen.add(v);
        const [, , kind, name] = v.split('/');
        visit(components?.[kind!]?.[name!]);
      } else {
        visit(v);
      }
    }
  };
  visit(root);
  return seen;
}

export function documentForVersion(doc: Doc, version: number): Doc {
  const paths = Object.fromEntries(
    Object.entries(doc.paths ?? {}).filter(([p]) => {
      const m = VERSIONED.exec(p);
      return m === null || Number(m[1]) === version;
    }),
  );
  // the 3.1 `webhooks` (the event types' payloads) stay whole in every version's document, with what they name
  const used = reachableComponents({ paths, webhooks: (doc as { webhooks?: unknown }).webhooks }, doc.components);
  // Security schemes are named by requirements, not by $ref: keep them all.
  const components: Doc['components'] = { securitySchemes: doc.components?.securitySchemes };
  for (const [kind, entries] of Object.entries(doc.components ?? {})) {
    if (kind === 'securitySchemes' || !entries) continue;
    const kept = Object.entries(entries).filter(([name]) => used.has(`#/components/${kind}/${name}`));
    if (kept.length) components[kind] = Object.fromEntries(kept);
  }
  const tagsUsed = new Set(
    Object.values(paths).flatMap((item) =>
      Object.values(item as Record<string, { tags?: string[] }>).flatMap((op) => op.tags ?? []),
    ),
  );
  return {
    ...doc,
    info: {
      ...doc.info,
      title: `${String(doc.info?.title ?? 'API')} — v${version}`,
      description: `**This document: API v${version}** and the unversioned operations; \`/v3/api-docs\` is the complete one.\n\n${String(doc.info?.description ?? '')}`,
    },
    tags: (doc.tags ?? []).filter((t) => tagsUsed.has(t.name)),
    paths,
    components,
  };
}
