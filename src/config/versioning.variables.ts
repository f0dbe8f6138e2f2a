/**
 * The variables that deprecate and sunset an API version (SPEC §9), one set per version; config.ts gathers
 * them into Config.apiDeprecation and checks that a sunset is not earlier than its deprecation.
 */
import Type, { type TSchema } from 'typebox';
import { optional } from '../lib/env-variables.js';

export const versioningVariables = {
  API_V1_DEPRECATED_AT: optional(Type.Integer({ read: 'instant' }), {
    description: "From this date API v1's responses carry `Deprecation: @<epoch>` (RFC 9745)",
  }),
  API_V1_SUNSET_AT: optional(Type.Integer({ read: 'instant' }), {
    description: 'After this date API v1 may be gone: `Sunset` (RFC 8594); not before `API_V1_DEPRECATED_AT`',
  }),
  API_V1_DEPRECATION_LINK: optional(Type.String({ read: 'httpUrl' }), {
    description: 'Page explaining v1\'s deprecation: `Link: <…>; rel="deprecation"`',
  }),
  API_V2_DEPRECATED_AT: optional(Type.Integer({ read: 'instant' }), {
    description: "From this date API v2's responses carry `Deprecation: @<epoch>` (RFC 9745)",
  }),
  API_V2_SUNSET_AT: optional(Type.Integer({ read: 'instant' }), {
    description: 'After this date API v2 may be gone: `Sunset` (RFC 8594); not before `API_V2_DEPRECATED_AT`',
  }),
  API_V2_DEPRECATION_LINK: optional(Type.String({ read: 'httpUrl' }), {
    description: 'Page explaining v2\'s deprecation: `Link: <…>; rel="deprecation"`',
  }),
} satisfies Record<string, TSchema>;
