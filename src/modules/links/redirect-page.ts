/**
 * The redirect's error answers (SPEC §6): the JSON envelope for API clients, a small self-contained HTML page
 * for a browser. "Prefers" follows RFC 9110 §12.5.1: the q-value of text/html against that of
 * application/json, each taken from its most specific matching range; a tie (e.g. `*\/*`) means JSON.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  let html = { q: 0, specificity: -1 };
  let json = { q: 0, specificity: -1 };
  for (const part of accept.split(',')) {
    const [rangeRaw, ...params] = part.split(';');
    const range = rangeRaw!.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=');
      if (k?.trim().toLowerCase() === 'q') q = Number(v?.trim());
    }
    if (!Number.isFinite(q)) continue;
    const specificity = range === '*/*' ? 0 : range.endsWith('/*') ? 1 : 2;
    const matches = (type: string) => range === type || range === '*/*' || range === `${type.split('/')[0]}/*`;
    if (matches('text/html') && specificity > html.specificity) html = { q, specificity };
    if (matches('application/json') && specificity > json.specificity) json = { q, specificity };
  }
  return html.q > json.q;
}

const PAGES = {
  404: { title: 'Link not found', text: 'There is no link at this address. Check the address for typos: short codes are case-sensitive.' },
  410: { title: 'Link expired', text: 'This link has expired and no longer leads anywhere.' },
} as const;

/** No markup from input goes in: the page is the same for every code. */
export function redirectErrorPage(status: 404 | 410): string {
  const { title, text } = PAGES[status];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">
<title>${title}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}</style>
</head><body><h1>${title}</h1><p>${text}</p></body></html>
`;
}

/** Nothing on the page loads or runs anything. */
export const ERROR_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'";
