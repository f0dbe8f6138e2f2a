import { pooledRandomBytes } from '../lib/random-text.js';

/*
 * Event ids (SPEC §22), apart from db/events.ts: the embedded click writer's thread makes the ids of its
 * `link.clicked` events, and loads no Kysely (its statements are better-sqlite3's own).
 */

/** base64url's 64 characters in ASCII order: an id's characters sort as its bytes do. */
const ORDERED_ALPHABET = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
const RANDOM_BYTES = 10;

/** `evt_` and 16 bytes (6 of `time`, then `random`'s 10), 6 bits a character, in ORDERED_ALPHABET: 22 characters. */
function eventIdOf(time: number, random: Uint8Array, at: number): string {
  const b = new Uint8Array(16);
  for (let i = 5, t = time; i >= 0; i -= 1, t = Math.floor(t / 256)) b[i] = t % 256;
  b.set(random.subarray(at, at + RANDOM_BYTES), 6);
  const a = ORDERED_ALPHABET;
  let id = 'evt_';
  for (let i = 0; i < 15; i += 3) {
    const n = (b[i]! << 16) | (b[i + 1]! << 8) | b[i + 2]!;
    id += a[n >>> 18]! + a[(n >>> 12) & 63]! + a[(n >>> 6) & 63]! + a[n & 63]!;
  }
  return id + a[b[15]! >>> 2]! + a[(b[15]! & 3) << 4]!;
}

/**
 * `evt_` and 22 characters: the time it was made (48 bits of milliseconds) and 80 random bits, written so that
 * ids sort by that time. Unguessable, what receivers deduplicate on (`webhook-id`). In time order because the
 * events table's unique index on it then takes each batch of new ids beside the last ones: with 128 random bits
 * every id went to a random page of that index, and an import's transaction of 500 `link.created` events
 * rewrote most of the index's pages at every commit (on 100,000 links, about 1.2 of a CSV import's 8 CPU
 * seconds in SQLite; docs/performance.md, "Imports").
 */
export const newEventId = (): string => eventIdOf(Date.now(), pooledRandomBytes(RANDOM_BYTES), 0);

/**
 * `n` event ids from one draw of random bytes (a click batch's: one call, not one per click). The bytes come from
 * the CSPRNG's pool (lib/random-text.ts), as a short code's do: a call into the kernel per event was 3 % of a
 * link creation's main thread (bench/ link-create, its profile).
 */
export function newEventIds(n: number): string[] {
  const time = Date.now();
  const bytes = pooledRandomBytes(RANDOM_BYTES * n);
  const ids = new Array<string>(n);
  for (let i = 0; i < n; i++) ids[i] = eventIdOf(time, bytes, RANDOM_BYTES * i);
  return ids;
}
