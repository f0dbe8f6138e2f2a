/** What Ferry learns and keeps about a visitor (SPEC §15, §24): the country, the address, Do Not Track, retention. */
import Type, { type TSchema } from 'typebox';
import { flag, int, optional } from '../lib/env-variables.js';

export const visitorVariables = {
  COUNTRY_HEADER: optional(Type.String({ read: 'headerName' }), {
    description:
      "Request header holding the visitor's country, set by a trusted proxy (e.g. `CF-IPCountry`); believed only from a proxy `TRUST_PROXY` trusts",
  }),
  GEOIP_DATABASE: optional(Type.String(), {
    description:
      'Path of an offline MaxMind `.mmdb` (GeoLite2/GeoIP2 Country or City) for the country when no trusted header gives one; nothing is downloaded',
  }),
  IP_ANONYMIZE: flag(
    false,
    '`true`: click records keep IPv4 /24 and IPv6 /48 only (after the country is looked up on the full address); unique visitors come from a salted daily hash of the full address',
  ),
  HONOR_GPC: flag(
    false,
    '`true`: a visit sending `Sec-GPC: 1` or `DNT: 1` is recorded as a count only: its click keeps time, link, domain and bot flag, no address, user agent, referrer, visitor or country (docs/privacy.md)',
  ),
  CLICK_RETENTION_DAYS: int(
    0,
    0,
    36_500,
    "Click records older than this many days are deleted at start-up and then daily (statistics, counts and rollups stay); a domain's `click_retention_days` overrides it for its links; `0` keeps them forever",
  ),
} satisfies Record<string, TSchema>;
