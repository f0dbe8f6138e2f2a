/**
 * The values analytics names (SPEC §15), in a file of their own: the writer thread loads them without the
 * schemas.
 */
/** Shown for a visit that sent no Referer. */
export const DIRECT_REFERRER = '(direct)';
/** A browser, OS or country that is not known, in a top list. */
export const UNKNOWN_VALUE = '(unknown)';
/** The device classes a click record carries. */
export const DEVICES = ['desktop', 'mobile', 'tablet', 'bot', 'other'] as const;
export type Device = (typeof DEVICES)[number];
