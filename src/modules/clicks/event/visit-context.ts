import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import type { CountryResponse, Reader } from 'maxmind';
import { anonymizeIp, countryCode, dailyVisitorHash } from './visitor.js';

/**
 * What a click learns besides the request (SPEC §15), in two parts. The country is a fact of the visit: the
 * redirect asks for it once per visit (modules/redirect/visit-context.ts). IP_ANONYMIZE's shortened address and
 * daily hash are how the click records its visitor, added when the click event is built (click-event.ts).
 */

/** COUNTRY_HEADER from a trusted proxy, else GEOIP_DATABASE's answer for the address; null if unknown. */
export type CountryLookup = (
  ip: string | null,
  headers: IncomingHttpHeaders,
  viaTrustedProxy: boolean,
) => string | null;

/** The address a click records and, with IP_ANONYMIZE, who counts as a unique visitor in its place. */
export interface RecordedAddress {
  /** the address to record: as seen, or shortened (IP_ANONYMIZE) */
  ip: string | null;
  /** with IP_ANONYMIZE: who counts as a unique visitor, in place of the address */
  visitor?: string;
}

/** IP_ANONYMIZE's shortening and daily hash of a visit's address at its time. */
export type RecordAddress = (ip: string | null, at: number) => RecordedAddress;

export const visitorSalt = (secret: string | Uint8Array): Buffer =>
  createHash('sha256').update('ferry-visitor:').update(secret).digest();

/**
 * Opens GEOIP_DATABASE (a MaxMind GeoLite2/GeoIP2 Country or City file) once at start-up: read whole into
 * memory (a country database is ~9 MB), nothing downloaded. A file that is missing or not a database stops
 * the start with its path in the message.
 */
export async function openGeoipDatabase(path: string | null): Promise<Reader<CountryResponse> | null> {
  if (path === null) return null;
  try {
    const { Reader } = await import('maxmind'); // only with GEOIP_DATABASE
    return new Reader<CountryResponse>(await readFile(path));
  } catch (err) {
    throw new Error(`GEOIP_DATABASE: cannot open ${path} as a MaxMind database: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** COUNTRY_HEADER (lower case) and an opened GEOIP_DATABASE; null when neither is configured. */
export function createCountryLookup(opts: {
  countryHeader: string | null;
  geoip: Pick<Reader<CountryResponse>, 'get'> | null;
}): CountryLookup | null {
  const { countryHeader, geoip } = opts;
  if (countryHeader === null && geoip === null) return null;
  const lookup = (ip: string | null): string | null => {
    if (!geoip || !ip) return null;
    try {
      // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d; an IPv4 database knows a.b.c.d.
      const r = geoip.get(ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip);
      return countryCode(r?.country?.iso_code ?? r?.registered_country?.iso_code ?? null);
    } catch {
      return null; // not an address the database understands
    }
  };
  return (ip, headers, viaTrustedProxy) => {
    // A header only counts when a trusted proxy set it: a client talking to us directly could send any.
    const fromHeader = countryHeader !== null && viaTrustedProxy ? countryCode(headers[countryHeader]) : null;
    return fromHeader ?? lookup(ip);
  };
}

/** IP_ANONYMIZE (SPEC §15): the /24 or /48 of the address, and a daily hash of the full one; null when off. */
export function createAddressRecorder(opts: { anonymize: boolean; salt: Buffer }): RecordAddress | null {
  const { anonymize, salt } = opts;
  if (!anonymize) return null;
  return (ip, at) => ({ ip: anonymizeIp(ip), ...(ip ? { visitor: dailyVisitorHash(salt, ip, at) } : {}) });
}
