import { useEffect, useState } from 'preact/hooks';

/** Where the server serves the dashboard (src/modules/dashboard); every client route lives under it. */
export const BASE = '/app';

export const appPath = (path: string): string => `${BASE}${path === '/' ? '' : path}`;

export interface Location {
  /** the path inside the dashboard, e.g. `/links/abc/stats` */
  path: string;
  query: URLSearchParams;
}

const NAVIGATED = 'ferry:navigated';

function currentLocation(): Location {
  const raw = window.location.pathname;
  const inside = raw.startsWith(BASE) ? raw.slice(BASE.length) : raw;
  return { path: inside === '' ? '/' : inside, query: new URLSearchParams(window.location.search) };
}

/**
 * The URL is the screen's state (STYLE): which screen, and its filters, page and date range in the query
 * string, so a view can be bookmarked and shared. History entries for screens; `replace` for a filter
 * change that should not fill the back button.
 */
export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = new URL(to, window.location.origin);
  if (url.pathname + url.search === window.location.pathname + window.location.search) return;
  if (opts.replace) window.history.replaceState(null, '', url.pathname + url.search);
  else window.history.pushState(null, '', url.pathname + url.search);
  window.dispatchEvent(new Event(NAVIGATED));
}

export function useLocation(): Location {
  const [location, setLocation] = useState(currentLocation);
  useEffect(() => {
    const update = () => setLocation(currentLocation());
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATED, update);
    // A child's effect (a Redirect) may have navigated before this effect subscribed.
    update();
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATED, update);
    };
  }, []);
  return location;
}

/** `/links/:code/stats` against `/links/abc/stats` gives `{ code: 'abc' }`; null when it does not match. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const h = have[i]!;
    if (w.startsWith(':')) params[w.slice(1)] = decodeURIComponent(h);
    else if (w !== h) return null;
  }
  return params;
}

/** The current query with some keys set (a string) or removed (null or ''), as a href of the same path. */
export function withQuery(location: Location, changes: Record<string, string | null>): string {
  const query = new URLSearchParams(location.query);
  for (const [key, value] of Object.entries(changes)) {
    if (value === null || value === '') query.delete(key);
    else query.set(key, value);
  }
  const search = query.toString();
  return appPath(location.path) + (search ? `?${search}` : '');
}

/** Only a path inside the dashboard may be a place to return to after signing in (no open redirect). */
export function safeReturnPath(next: string | null): string {
  return next && next.startsWith(`${BASE}/`) && !next.startsWith('//') && !next.includes('\\')
    ? next
    : appPath('/links');
}
