/**
 * Accept-Language (RFC 9110 §12.5.4) as a list of ranges by preference; equal weights keep their order. A
 * malformed weight counts as 1, as the rest of the header's reading is lenient too.
 */
export function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  const ranges: Array<{ tag: string; q: number; at: number }> = [];
  header.split(',').forEach((part, at) => {
    const [tag = '', ...params] = part.split(';').map((p) => p.trim());
    const weight = params.find((p) => p.toLowerCase().startsWith('q='));
    const q = weight === undefined ? 1 : Number(weight.slice(2));
    if (tag === '' || tag === '*' || q === 0) return;
    ranges.push({ tag: tag.toLowerCase(), q: Number.isFinite(q) ? q : 1, at });
  });
  return ranges.sort((a, b) => b.q - a.q || a.at - b.at).map((r) => r.tag);
}
