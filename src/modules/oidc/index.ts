/**
 * The oidc module's public face, for the wiring (app-modules.ts): single sign-on through an OpenID provider
 * (SPEC §23). It signs accounts in through the users module and ends with a login code of the tokens module.
 */
export { createOidcModule, CALLBACK_PATH } from './oidc.module.js';
