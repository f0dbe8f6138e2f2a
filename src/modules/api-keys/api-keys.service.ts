import type { AuditActor } from '../../db/audit-log.js';
import type { ApiKeyRow } from '../../db/types.js';
import { AppError, InvalidTokenError, notFound, validationError } from '../../lib/app-error.js';
import { INSTANT_RULE, parseInstant } from '../../lib/instant.js';
import type { Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import { isoTime } from '../../lib/common.schemas.js';
import type { PageResult, Paginator } from '../../lib/pagination.js';
import type { Scope } from '../../lib/scopes.js';
import type { UsersRepository } from '../users/index.js';
import { generateApiKey, type ApiKeyHasher } from './api-key-secret.js';
import type { ApiKeysRepository } from './api-keys.repository.js';
import {
  API_KEY_SORT_COLUMNS,
  type ApiKey,
  type ApiKeyCreate,
  type ApiKeyCreated,
  type ApiKeyListQueryT,
} from './api-keys.schemas.js';
import type { LastUsedTracker } from './last-used.js';

/** Keys one user may hold at once: enough for every script and machine, and a bound on what one account stores. */
export const MAX_KEYS_PER_USER = 100;

export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes.split(' ') as Scope[],
    created_at: isoTime(row.created_at),
    expires_at: row.expires_at === null ? null : isoTime(row.expires_at),
    last_used_at: row.last_used_at === null ? null : isoTime(row.last_used_at),
    domains: domainsOf(row),
  };
}

/** The domain ids a key is limited to; null: not limited. */
const domainsOf = (row: Pick<ApiKeyRow, 'domains'>): number[] | null =>
  row.domains === null ? null : row.domains === '' ? [] : row.domains.split(',').map(Number);

/** EXPIRES_AT of a new key: in the future, or null for none. */
function expiryOf(input: ApiKeyCreate, clock: Clock): number | null {
  if (input.expires_at === undefined || input.expires_at === null) return null;
  const at = parseInstant(input.expires_at);
  if (at === null) throw validationError([{ field: 'expires_at', message: INSTANT_RULE }], 'Request body is invalid');
  if (!(at > clock.now()))
    throw validationError([{ field: 'expires_at', message: 'must be in the future' }], 'Request body is invalid');
  return at;
}

/** A key may be limited to the default domain (0) and to domains its user owns (an admin: any domain). */
async function domainsFor(
  keys: Pick<ApiKeysRepository, 'domainOwners'>,
  input: ApiKeyCreate,
  owner: { id: number; role: string },
): Promise<string | null> {
  if (input.domains === undefined || input.domains === null) return null;
  const ids = [...new Set(input.domains)];
  const owners = await keys.domainOwners(ids.filter((id) => id !== 0));
  const bad = ids.filter(
    (id) => id !== 0 && (!owners.has(id) || (owner.role !== 'admin' && owners.get(id) !== owner.id)),
  );
  if (bad.length)
    throw validationError(
      [{ field: 'domains', message: `${bad.join(', ')}: not a domain of this user` }],
      'Request body is invalid',
    );
  return ids.join(',');
}

/** create(): the key, generated, hashed and stored within the user's limit. */
async function createKey(
  deps: ApiKeysDeps,
  userId: number,
  input: ApiKeyCreate,
  actor: AuditActor,
): Promise<ApiKeyCreated> {
  const { keys, users, hash, clock } = deps;
  const expiresAt = expiryOf(input, clock);
  const owner = await users.findById(userId);
  if (!owner) throw notFound('User');
  if (owner.status !== 'active')
    throw new AppError('ACCOUNT_NOT_ACTIVE', `Only an active account may hold API keys; this one is ${owner.status}`);
  const domains = await domainsFor(keys, input, owner);
  const { key, prefix } = generateApiKey();
  const scopes = [...new Set(input.scopes)].sort();
  const row = await keys.insertWithin(
    {
      user_id: userId,
      name: input.name,
      prefix,
      key_hash: hash(key)!,
      scopes: scopes.join(' '),
      created_at: clock.now(),
      expires_at: expiresAt,
      domains,
    },
    MAX_KEYS_PER_USER,
    actor,
  );
  if (row === 'user-missing') throw notFound('User');
  if (row === 'full')
    throw new AppError('CONFLICT', `A user may hold at most ${MAX_KEYS_PER_USER} API keys; revoke one first`);
  return { ...toApiKey(row), key };
}

/** authenticate(): the caller a key stands for, or InvalidTokenError. */
async function authenticateKey(deps: ApiKeysDeps, key: string): Promise<Caller> {
  const { keys, hash, lastUsed, clock } = deps;
  const keyHash = hash(key);
  const row = keyHash === null ? undefined : await keys.findByHash(keyHash);
  if (!row) throw new InvalidTokenError('The API key is invalid or has been revoked');
  const now = clock.now();
  if (row.expires_at !== null && row.expires_at <= now) throw new InvalidTokenError('The API key has expired');
  if (row.status === 'suspended') throw new InvalidTokenError('The account is suspended');
  lastUsed.note(row.id, now, row.last_used_at);
  return {
    userId: row.user_id,
    role: row.role,
    status: row.status,
    jti: '',
    exp: row.expires_at === null ? Infinity : Math.floor(row.expires_at / 1000),
    apiKey: { id: row.id, scopes: row.scopes.split(' ') as Scope[], domains: domainsOf(row) },
  };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;

interface ApiKeysDeps {
  keys: ApiKeysRepository;
  users: Pick<UsersRepository, 'findById'>;
  hash: ApiKeyHasher;
  lastUsed: LastUsedTracker;
  clock: Clock;
  paginator: Paginator;
}

export function createApiKeysService(deps: ApiKeysDeps) {
  const { keys, users, lastUsed, paginator } = deps;

  return {
    /**
     * A new key for the user; the key itself is in the answer and nowhere else. Only an active account holds
     * keys (SPEC §18: a pending one creates nothing), whoever asks for it.
     */
    /** `actor`: who creates it, for the audit log (SPEC §23) */
    create: (userId: number, input: ApiKeyCreate, actor: AuditActor): Promise<ApiKeyCreated> =>
      createKey(deps, userId, input, actor),

    async list(
      userId: number,
      query: ApiKeyListQueryT,
      requestUrl: string,
      cursorOnly = false,
    ): Promise<PageResult<ApiKey>> {
      const list = paginator.resolve(query, API_KEY_SORT_COLUMNS, {}, cursorOnly);
      if (!(await users.findById(userId))) throw notFound('User');
      await lastUsed.flush(); // what this instance noted is shown at once
      const { rows, total } = await keys.listForUser(userId, list);
      const sortValue = (r: ApiKeyRow): string | number => r[list.sortColumn as 'created_at' | 'name'];
      return paginator.page(rows, list, total, requestUrl, toApiKey, sortValue);
    },

    async get(userId: number, keyId: number): Promise<ApiKey> {
      await lastUsed.flush();
      const row = await keys.findForUser(userId, keyId);
      if (!row) throw notFound('API key');
      return toApiKey(row);
    },

    /** Deletes the key: the next request made with it, on any instance, finds no row (401). */
    async revoke(userId: number, keyId: number, actor: AuditActor): Promise<void> {
      if (!(await keys.deleteForUser(userId, keyId, undefined, actor))) throw notFound('API key');
    },

    /**
     * The caller a key stands for: its user, with the user's current role and status (never more), limited
     * to the key's scopes. Unknown, revoked or expired keys and keys of suspended users are refused.
     */
    authenticate: (key: string): Promise<Caller> => authenticateKey(deps, key),

    flushLastUsed: (): Promise<void> => lastUsed.flush(),
  };
}
