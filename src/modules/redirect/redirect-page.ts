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
  missing: {
    title: 'Link not found',
    text: 'There is no link at this address. Check the address for typos: short codes are case-sensitive.',
  },
  expired: { title: 'Link expired', text: 'This link has expired and no longer leads anywhere.' },
  disabled: {
    title: 'Link disabled',
    text: 'This link has been disabled by the people who run this service and no longer leads anywhere.',
  },
  exhausted: {
    title: 'Link used up',
    text: 'This link has been followed as many times as its owner allowed, and no longer leads anywhere.',
  },
  throttled: {
    title: 'Too many attempts',
    text: 'Too many wrong passwords were tried for this link from your address. Wait a minute, then try again.',
  },
} as const;

export type ErrorPage = keyof typeof PAGES;

const page = (title: string, body: string): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">
<title>${title}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}input,button{font:inherit;padding:.4rem .6rem}p.error{color:#a00}</style>
</head><body><h1>${title}</h1>${body}</body></html>
`;

/** No markup from input goes in: each page is the same for every code and every visitor. */
export function redirectErrorPage(kind: ErrorPage): string {
  const { title, text } = PAGES[kind];
  return page(title, `<p>${text}</p>`);
}

/**
 * The password form of a protected link (SPEC §13). It has no action attribute, so it posts to the address
 * it was served at, query string included (a forward_query link keeps its utm_* parameters through the form).
 * Nothing from the request appears in it.
 */
export function passwordPage(wrong: boolean): string {
  return page(
    'Password required',
    `${wrong ? '<p class="error" role="alert">That password is not right.</p>' : ''}<p>This link is protected by a password.</p>
<form method="post"><label for="password">Password</label><br><input id="password" name="password" type="password" required autofocus autocomplete="off" maxlength="128"> <button type="submit">Open link</button></form>`,
  );
}

/**
 * Nothing on the pages loads or runs anything. `form-action` is left unrestricted on purpose: browsers apply
 * it to the redirect that follows a form submission, and that redirect goes to the link's target, whatever
 * origin it has. The only form is the page's own, and no input reaches the page.
 */
export const ERROR_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";
