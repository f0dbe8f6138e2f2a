/**
 * The users module's public face: other modules (links, orders, tokens, api-keys) import from here only.
 * What they need of users is narrow — find an account, check its status, hash and verify passwords — and is
 * given to their factories as `Pick<UsersRepository, …>` / `PasswordHasher` by the wiring in app.ts, which
 * builds the module with createUsersModule.
 */
export type { PasswordHasher } from './password.js';
export type { UsersRepository } from './users.repository.js';
export { createUsersModule } from './users.module.js';
/** The revocation of a user's earlier tokens that a change of role outside this module (single sign-on) applies. */
export { tokenRevocation } from './token-revocation.js';
/** For the CLI (`ferry admin`, `ferry users`): the account as the API shows it, and the shapes it checks input with. */
export { toUser } from './users.service.js';
export { UserCreateSchema, UserPatchSchema, type User, type UserPatch } from './users.schemas.js';
