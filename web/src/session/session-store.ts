/**
 * The bearer token, in memory and in sessionStorage: it survives a reload of the tab but not
 * the tab itself, and it is never a cookie, so the API has no CSRF surface. Nothing else is stored.
 */
const KEY = 'ferry.session';

interface Saved {
  token: string;
  expiresAt: string;
}

export type SessionEnd = 'signed-out' | 'expired';

export interface SessionStore {
  /** the token, or null; a token past its expiry ends the session here rather than earning a 401 later */
  token(): string | null;
  save(token: string, expiresAt: string): void;
  /** forget the token; `why` tells the sign-in screen what to say */
  clear(why: SessionEnd): void;
  /** called on every change, with why the session ended (null: a new one started) */
  subscribe(listener: (ended: SessionEnd | null) => void): () => void;
}

function read(storage: Storage): Saved | null {
  try {
    const saved = JSON.parse(storage.getItem(KEY) ?? 'null') as Partial<Saved> | null;
    return typeof saved?.token === 'string' && typeof saved.expiresAt === 'string'
      ? { token: saved.token, expiresAt: saved.expiresAt }
      : null;
  } catch {
    return null;
  }
}

export function createSessionStore(storage: Storage, now: () => number = Date.now): SessionStore {
  let current = read(storage);
  const listeners = new Set<(ended: SessionEnd | null) => void>();
  const notify = (ended: SessionEnd | null) => listeners.forEach((l) => l(ended));
  const clear = (why: SessionEnd) => {
    if (current === null) return;
    current = null;
    storage.removeItem(KEY);
    notify(why);
  };
  return {
    token: () => {
      if (current && !(Date.parse(current.expiresAt) > now())) clear('expired');
      return current?.token ?? null;
    },
    save: (token, expiresAt) => {
      current = { token, expiresAt };
      storage.setItem(KEY, JSON.stringify(current));
      notify(null);
    },
    clear,
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
