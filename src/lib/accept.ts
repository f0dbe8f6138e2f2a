/**
 * Proactive negotiation (RFC 9110 §12.5.1): which of the `offers` (media types, most preferred first) the
 * Accept header likes best. Each offer takes the q-value of its most specific matching range; q=0 refuses it;
 * ties go to the earlier offer. No Accept accepts anything: the first offer. Null when nothing is acceptable.
 */
export function negotiate(accept: string | undefined, offers: readonly string[]): string | null {
  if (accept === undefined || accept.trim() === '') return offers[0] ?? null;
  const ranges = accept.split(',').map((part) => {
    const [rangeRaw, ...params] = part.split(';');
    const range = rangeRaw!.trim().toLowerCase();
    const qParam = params.map((p) => p.split('=')).find(([k]) => k?.trim().toLowerCase() === 'q');
    const q = qParam ? Number(qParam[1]?.trim()) : 1;
    return { range, q: Number.isFinite(q) ? q : 0 };
  });
  let best: { offer: string; q: number } | null = null;
  for (const offer of offers) {
    let match = { q: 0, specificity: -1 };
    for (const { range, q } of ranges) {
      const specificity = range === offer ? 2 : range === `${offer.split('/')[0]}/*` ? 1 : range === '*/*' ? 0 : -1;
      if (specificity > match.specificity) match = { q, specificity };
    }
    if (match.q > 0 && (best === null || match.q > best.q)) best = { offer, q: match.q };
  }
  return best?.offer ?? null;
}

/** An unversioned path's version Accept (plugins/versioning.ts) asks for JSON. */
const VENDOR_JSON = /application\/vnd\.ferry\.v[^+;,\s]*\+json/gi;

/** The Accept header with the version's vendor media types read as application/json (for `negotiate`). */
export const vendorJsonAsJson = (accept: string | undefined): string | undefined =>
  accept?.replace(VENDOR_JSON, 'application/json');
