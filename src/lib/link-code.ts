import Type from 'typebox';

/**
 * The short code as a request names it (SPEC §6). Shared by the links module (which owns codes) and the clicks
 * module (which addresses a link's statistics and records by code), so it lives here and neither module imports
 * the other's files for it.
 */
export const CODE_PATTERN = '^[0-9a-zA-Z]{1,8}$';

/** An alias (SPEC §20): 1-64 of 0-9a-zA-Z_-, case-sensitive; a code is one too, so a visit's path is either. */
export const ALIAS_PATTERN = '^[0-9a-zA-Z_-]{1,64}$';
export const MAX_ALIAS_LENGTH = 64;

export const shortCode = (description = '1-8 of 0-9 a-z A-Z; case-sensitive') =>
  Type.String({ pattern: CODE_PATTERN, minLength: 1, maxLength: 8, description });

export const LinkCodeParams = Type.Object({ code: shortCode() }, { additionalProperties: false });

/**
 * `?domain=` on every path that names a code (SPEC §19): the domain of the code; absent, the default domain.
 * Shared like the code itself.
 */
export const domainQuery = {
  domain: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 253,
      pattern: '^[^\\s/:@]+$',
      description: 'The domain of the code (absent: the default domain)',
    }),
  ),
};
