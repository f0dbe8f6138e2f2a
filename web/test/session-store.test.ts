import { describe, expect, it } from 'vitest';
import { createSessionStore } from '../src/session/session-store';

/** sessionStorage's interface over a Map. */
function memoryStorage(initial: Record<string, string> = {}): Storage {
  const map = new Map(Object.entries(initial));
  return {
    get length() {
      return map.size;
    },
    clear: () => map.clear(),
    getItem: (k) => map.get(k) ?? null,
    key: (i) => [...map.keys()][i] ?? null,
    removeItem: (k) => void map.delete(k),
    setItem: (k, v) => void map.set(k, v),
  };
}

describe('the session store', () => {
  it('when a token is saved, then it is kept in sessionStorage for a reload of the tab', () => {
    const storage = memoryStorage();
    createSessionStore(storage, () => 0).save('tok', '2026-11-23T12:00:00.000Z');
    expect(createSessionStore(storage, () => 0).token()).toBe('tok');
  });

  it('when the token has expired, then it is forgotten and listeners hear that the session expired', () => {
    let now = Date.parse('2026-11-23T11:59:59.000Z');
    const storage = memoryStorage();
    const store = createSessionStore(storage, () => now);
    const heard: Array<string | null> = [];
    store.subscribe((why) => heard.push(why));
    store.save('tok', '2026-11-23T12:00:00.000Z');
    expect(store.token()).toBe('tok');
    now += 1000;
    expect(store.token()).toBeNull();
    expect(heard).toEqual([null, 'expired']);
    expect(storage.length).toBe(0);
  });

  it('when signing out twice, then listeners hear it once', () => {
    const store = createSessionStore(memoryStorage(), () => 0);
    const heard: Array<string | null> = [];
    store.save('tok', '2030-01-01T00:00:00.000Z');
    store.subscribe((why) => heard.push(why));
    store.clear('signed-out');
    store.clear('signed-out');
    expect(heard).toEqual(['signed-out']);
  });

  it('when sessionStorage holds something else under the key, then no session', () => {
    for (const junk of ['{', '"tok"', '{"token":1}', 'null']) {
      expect(createSessionStore(memoryStorage({ 'ferry.session': junk }), () => 0).token(), junk).toBeNull();
    }
  });
});
