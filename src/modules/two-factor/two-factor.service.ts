import { AppError } from '../../lib/app-error.js';
import type { Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import { auditActorOf, type AuditActor } from '../../db/audit-log.js';
import type { UsersRepository } from '../users/index.js';
import {
  enrolment,
  looksLikeRecoveryCode,
  newRecoveryCodes,
  newTotpSecret,
  recoveryCodeHash,
  stepOfCode,
} from './totp-codes.js';
import type { SecretBox } from './totp-secret.js';
import type { TwoFactorRepository } from './two-factor.repository.js';

export type TwoFactorService = ReturnType<typeof createTwoFactorService>;

/** Which second factor a sign-in used, for the audit log. */
export type SecondFactorUsed = 'totp' | 'recovery_code';

export interface TwoFactorDeps {
  repository: TwoFactorRepository;
  users: Pick<UsersRepository, 'findById'>;
  box: SecretBox;
  clock: Clock;
  /** the issuer an authenticator app shows (the instance's host) */
  issuer: string;
}

const conflict = (message: string): AppError => new AppError('CONFLICT', message);
const wrongCode = (): AppError =>
  new AppError('VALIDATION_ERROR', 'The code is not valid', [
    { field: 'code', message: 'is not a current code of the authenticator (or an unused recovery code)' },
  ]);

/**
 * Two-factor sign-in (SPEC §23): set-up, confirmation (recovery codes), turning it off, and the check a sign-in
 * makes. Every code, from the device or a recovery code, is accepted once.
 */
/** Uses up `code` for this user if it is a current TOTP code or an unused recovery code. */
async function useCode(
  { repository, box, clock }: TwoFactorDeps,
  userId: number,
  sealed: string,
  code: string,
): Promise<SecondFactorUsed | null> {
  // Null when sealed under another token key: only recovery codes work then, until `ferry users reset-2fa`.
  const secret = box.open(sealed, userId);
  const step = secret ? stepOfCode(secret, code, clock.now()) : null;
  if (step !== null) return (await repository.useStep(userId, step)) ? 'totp' : null;
  if (looksLikeRecoveryCode(code) && (await repository.useRecoveryCode(userId, recoveryCodeHash(code), clock.now())))
    return 'recovery_code';
  return null;
}

/** What a sign-in and the CLI ask: is it on, the second step's check, the operator's reset. */
function signInChecks(deps: TwoFactorDeps) {
  const { repository, clock } = deps;
  return {
    isEnabled: (userId: number): Promise<boolean> => repository.isEnabled(userId),

    /**
     * A sign-in's second step, after its password: 'off' when the user has no 2FA, 'missing' without a code,
     * the factor used, or null for a wrong or used code.
     */
    async checkSignIn(userId: number, code: string | undefined): Promise<'off' | 'missing' | SecondFactorUsed | null> {
      const row = await repository.find(userId);
      if (!row || row.enabled_at === null) return 'off';
      if (code === undefined) return 'missing';
      return useCode(deps, userId, row.secret, code);
    },

    /** `ferry users reset-2fa`: off, whatever the user holds; false when it was not on. */
    async reset(userId: number, actor: AuditActor): Promise<boolean> {
      return repository.disable(userId, {
        action: 'auth.totp_disabled',
        actor,
        target: { type: 'user', id: userId },
        details: { reset: true },
        at: clock.now(),
      });
    },
  };
}

export function createTwoFactorService(deps: TwoFactorDeps) {
  const { repository, box, clock } = deps;
  return {
    ...signInChecks(deps),
    /** Whether the caller's two-factor sign-in is on, since when, and how many recovery codes are left. */
    async status(
      caller: Caller,
    ): Promise<{ enabled: boolean; enabled_at: string | null; recovery_codes_left: number }> {
      const row = await repository.find(caller.userId);
      const on = row?.enabled_at != null;
      return {
        enabled: on,
        enabled_at: on ? new Date(Number(row!.enabled_at)).toISOString() : null,
        recovery_codes_left: on ? await repository.unusedRecoveryCodes(caller.userId) : 0,
      };
    },

    /** A new secret for the caller, not on until confirmed; 409 while 2FA is on. */
    async setup(caller: Caller): Promise<{ secret: string; otpauth_url: string; qr_svg: string }> {
      const user = await deps.users.findById(caller.userId);
      if (!user) throw new AppError('UNAUTHENTICATED', 'The token belongs to no user');
      const secret = newTotpSecret();
      if (!(await repository.startSetup(caller.userId, box.seal(secret, caller.userId), clock.now())))
        throw conflict('Two-factor sign-in is on already; turn it off first to set up a new device');
      return enrolment(secret, user.username, deps.issuer);
    },

    /** Turns it on with the device's current code; the ten recovery codes, shown this once. */
    async confirm(caller: Caller, code: string): Promise<{ recovery_codes: string[] }> {
      const row = await repository.find(caller.userId);
      if (!row) throw conflict('There is no two-factor set-up to confirm: start one with POST /users/me/totp');
      if (row.enabled_at !== null) throw conflict('Two-factor sign-in is on already');
      const secret = box.open(row.secret, caller.userId);
      const step = secret ? stepOfCode(secret, code, clock.now()) : null;
      if (step === null) throw wrongCode();
      const codes = newRecoveryCodes();
      const enabled = await repository.enable(caller.userId, step, codes.map(recoveryCodeHash), clock.now(), {
        action: 'auth.totp_enabled',
        actor: auditActorOf(caller),
        target: { type: 'user', id: caller.userId },
        at: clock.now(),
      });
      if (!enabled) throw conflict('Two-factor sign-in was turned on by another request');
      return { recovery_codes: codes };
    },

    /** Turns it off with a current code or an unused recovery code. */
    async disable(caller: Caller, code: string): Promise<void> {
      const row = await repository.find(caller.userId);
      if (!row || row.enabled_at === null) throw conflict('Two-factor sign-in is not on');
      const used = await useCode(deps, caller.userId, row.secret, code);
      if (!used) throw wrongCode();
      await repository.disable(caller.userId, {
        action: 'auth.totp_disabled',
        actor: auditActorOf(caller),
        target: { type: 'user', id: caller.userId },
        details: { with: used },
        at: clock.now(),
      });
    },
  };
}
