import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { IDToken } from 'openid-client';
import type { Registration } from '../../config.js';
import type { Dialect } from '../../db/dialect.js';
import type { Database, UserRow } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { LoginCodes } from '../tokens/index.js';
import { tokenRevocation, type PasswordHasher, type UsersRepository } from '../users/index.js';
import { baseUsername, groupsOf, providedEmail, providedName, usernameChoice } from './oidc-claims.js';
import type { IdentitiesRepository } from './oidc.repository.js';
import { SignInFailure } from './sign-in-failure.js';

export interface AccountRules {
  registration: Registration;
  usernameClaim: string;
  groupsClaim: string;
  /** empty: sign-in never changes a role */
  adminGroups: readonly string[];
}

/** Names tried for one account before giving up (each taken one costs a query). */
const USERNAME_CHOICES = 50;

export type OidcAccounts = ReturnType<typeof createOidcAccounts>;

interface AccountDeps {
  db: Kysely<Database>;
  dialect: Pick<Dialect, 'isUniqueViolation' | 'uniqueViolationTarget'>;
  users: Pick<UsersRepository, 'findById' | 'findByUsername' | 'findTaken' | 'insert' | 'updateKeepingAnAdmin'>;
  passwords: Pick<PasswordHasher, 'hash'>;
  identities: IdentitiesRepository;
  loginCodes: Pick<LoginCodes, 'create'>;
  clock: Clock;
  rules: AccountRules;
}

/** The first free username from the claims' base, checked before the insert (the insert's index decides). */
async function freeUsername(
  users: Pick<UsersRepository, 'findByUsername'>,
  base: string,
  from: number,
): Promise<{ name: string; n: number }> {
  for (let n = from; n < from + USERNAME_CHOICES; n++) {
    const name = usernameChoice(base, n);
    if (!(await users.findByUsername(name))) return { name, n };
  }
  throw new SignInFailure(
    409,
    'No username left',
    `Every username from "${base}" to "${usernameChoice(base, from + USERNAME_CHOICES - 1)}" is taken; ask an admin.`,
  );
}

/**
 * A first sign-in's account: a free username from the claims, the provider's e-mail unless a local account has
 * it, and the link to the (issuer, subject), written in one transaction.
 */
function createAccountMaker(deps: AccountDeps): (claims: IDToken) => Promise<UserRow> {
  const { db, dialect, users, passwords, identities, clock, rules } = deps;

  /**
   * The new account and its link, in one transaction. A name or e-mail taken meanwhile is retried with the next
   * choice; the link taken meanwhile (the same person's second tab) means the other sign-in made the account.
   */
  async function createAccount(claims: IDToken): Promise<UserRow> {
    const base = baseUsername(claims, rules.usernameClaim);
    const subjectKey = createHash('sha256').update(`${claims.iss} ${claims.sub}`).digest('hex').slice(0, 24);
    // Nobody knows this password: the account signs in through its provider, until an admin sets one (the CLI).
    const passwordHash = await passwords.hash(randomBytes(32).toString('base64url'));
    let email = providedEmail(claims);
    if (email && (await users.findTaken(undefined, email, null)).email) email = null;
    let n = 1;
    for (let attempt = 0; attempt < 5; attempt++) {
      const choice = await freeUsername(users, base, n);
      const address = email ?? `${subjectKey}@sso.invalid`;
      const now = clock.now();
      try {
        return await db.transaction().execute(async (tx) => {
          const user = await users.insert(
            {
              username: choice.name,
              username_lower: choice.name.toLowerCase(),
              email: address,
              email_lower: address.toLowerCase(),
              password_hash: passwordHash,
              role: 'user',
              status: 'active',
              name: providedName(claims),
              age: null,
              version: 1,
              created_at: now,
              updated_at: now,
            },
            tx,
          );
          await identities.insert(
            { issuer: claims.iss, subject: claims.sub, user_id: user.id, created_at: now, last_sign_in_at: now },
            tx,
          );
          return user;
        });
      } catch (err) {
        if (!dialect.isUniqueViolation(err)) throw err;
        const target = dialect.uniqueViolationTarget(err);
        if (target.includes('user_identities')) {
          const linked = await identities.find(claims.iss, claims.sub);
          const user = linked && (await users.findById(Number(linked.user_id)));
          if (user) return user;
        } else if (target.includes('email')) email = null;
        else n = choice.n + 1;
      }
    }
    throw new SignInFailure(409, 'Account not created', 'The account could not be created: sign in again.');
  }

  return createAccount;
}

/** The role the groups give, applied when it differs (revoking the account's earlier tokens). */
async function applyRole(
  deps: Pick<AccountDeps, 'users' | 'clock' | 'rules'>,
  user: UserRow,
  claims: IDToken,
): Promise<UserRow> {
  const { users, clock, rules } = deps;
  if (rules.adminGroups.length === 0) return user;
  const groups = groupsOf(claims, rules.groupsClaim);
  const role: UserRow['role'] = groups.some((g) => rules.adminGroups.includes(g)) ? 'admin' : 'user';
  if (role === user.role) return user;
  const now = clock.now();
  // As a change through the API (users/user-edits.ts): the account's earlier tokens are revoked.
  const changes = { role, updated_at: now, ...tokenRevocation(user, now) };
  const updated = await users.updateKeepingAnAdmin(user.id, changes, null);
  if (typeof updated === 'symbol')
    throw new SignInFailure(
      409,
      'Last admin',
      'Your groups no longer make you an admin, but you are the last active admin of this instance. Make another admin first (or add yourself to an admin group at the provider).',
    );
  if (!updated) throw new SignInFailure(409, 'Account changed', 'The account changed during sign-in: sign in again.');
  return updated;
}

/**
 * The account a verified ID token signs in as (SPEC §23): found by (issuer, `sub`) only — never by username or
 * e-mail, which a provider's user could choose to match someone else's local account — or made at the first
 * sign-in, active, unless REGISTRATION=closed. With OIDC_ADMIN_GROUPS the role follows the groups at every
 * sign-in, and a change revokes the account's earlier tokens as any role change does (SPEC §12).
 */
export function createOidcAccounts(deps: AccountDeps) {
  const { users, identities, clock, rules } = deps;
  const createAccount = createAccountMaker(deps);
  return {
    /** The login code of the account these verified claims sign in as. */
    async signIn(claims: IDToken): Promise<string> {
      const linked = await identities.find(claims.iss, claims.sub);
      let user = linked && (await users.findById(Number(linked.user_id)));
      if (!user) {
        if (rules.registration === 'closed')
          throw new SignInFailure(
            403,
            'Sign-up closed',
            'You signed in at the provider, but no account of this instance is linked to you, and sign-up is closed here: only an admin creates accounts.',
          );
        user = await createAccount(claims);
      } else {
        await identities.touch(claims.iss, claims.sub, clock.now());
      }
      if (user.status === 'suspended')
        throw new SignInFailure(403, 'Account suspended', 'This account is suspended: ask an admin.');
      user = await applyRole(deps, user, claims);
      return deps.loginCodes.create(user.id);
    },
  };
}
