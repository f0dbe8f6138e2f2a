/**
 * Longer request targets are 414 (RFC 9112 §3 recommends supporting at least 8000 octets). One number for the
 * two places that refuse one: the router's check (plugins/request-target.ts) and the parser's error, when the
 * request line overflows the header limit (infra/client-errors.ts).
 */
export const MAX_TARGET_LENGTH = 8192;
