import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { Reader, type CountryResponse } from 'maxmind';
import { anonymizeIp, countryCode, dailyVisitorHash } from './visitor.js';

/**
 * What the redirect adds to a click besides what it saw (SPEC §15): the country, and with IP_ANONYMIZE the
 * shortened address and the visitor's daily hash. Done at the redirect because only there is the full
 * address known; the user agent is parsed later, by the writer (user-agent.ts), off the request path.
 */
export interface VisitContext {
  /** the address to record: as seen, or shortened (IP_ANONYMIZE) */
  ip: string | null;
  country: string | null;
  /** with IP_ANONYMIZE: who counts as a unique visitor, in place of the address */
  visitor?: string;
}

export interface VisitInput {
  ip: string | null;
  headers: IncomingHttpHeaders;
  /** the request reached us through a proxy that TRUST_PROXY trusts (its forwarded headers are believed) */
  viaTrustedProxy: boolean;
  at: number;
}

export type DescribeVisit = (v: VisitInput) => VisitContext;

export interface VisitContextOptions {
  /** COUNTRY_HEADER, lower case */
  countryHeader: string | null;
  /** an opened GEOIP_DATABASE */
  geoip: Pick<Reader<CountryResponse>, 'get'> | null;
  anonymize: boolean;
  /** the daily hash's key (derived from the service's secret: every instance computes the same hash) */
  salt: Buffer;
}

export const visitorSalt = (secret: string | Uint8Array): Buffer => createHash('sha256').update('ferry-visitor:').update(secret).digest();

/**
 * Opens GEOIP_DATABASE (a MaxMind GeoLite2/GeoIP2 Country or City file) once at start-up: read whole into
 * memory (a country database is ~9 MB), nothing downloaded. A file that is missing or not a database stops
 * the start with its path in the message.
 */
export async function openGeoipDatabase(path: string | null): Promise<Reader<CountryResponse> | null> {
  if (path === null) return null;
  try {
    return new Reader<CountryResponse>(await readFile(path));
  } catch (err) {
    throw new Error(`GEOIP_DATABASE: cannot open ${path} as a MaxMind database: ${(err as Error).message}`, { cause: err });
  }
}

export function createVisitContext(opts: VisitContextOptions): DescribeVisit {
  const { countryHeader, geoip, anonymize, salt } = opts;
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
  return (v) => {
    // A header only counts when a trusted proxy set it: a client talking to us directly could send any.
    const fromHeader = countryHeader !== null && v.viaTrustedProxy ? countryCode(v.headers[countryHeader]) : null;
    const country = fromHeader ?? lookup(v.ip);
    if (!anonymize) return { ip: v.ip, country };
    return { ip: anonymizeIp(v.ip), country, ...(v.ip ? { visitor: dailyVisitorHash(salt, v.ip, v.at) } : {}) };
  };
}
