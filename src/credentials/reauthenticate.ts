/**
 * @module Re-authentication before a sensitive action (DESIGN §9.2): a stolen session cookie
 * alone must not be enough to change the password or the email, or to delete the account. An
 * account with a password proves it again (`currentPassword`); an account without one (provider
 * sign-in only) needs a session signed in less than 10 minutes ago.
 *
 * A wrong `currentPassword` is a failed login of that email: it is counted by the login lock, in
 * the same reserve → check → record order as login (limits/login-lock.ts), so a session cannot
 * be used to guess the password any faster than the login page. Every check, right or wrong, is
 * also counted by RATE_LIMIT_REAUTHENTICATE per user and per IP.
 */
import { recordAudit } from '../audit/record.js';
import type { BackgroundTasks } from '../background.js';
import { forbidden, tooManyRequests, unauthorized } from '../errors.js';
import type { LockSubject, LoginLock } from '../limits/login-lock.js';
import type { RateLimits } from '../limits/rate-limits.js';
import { noticeAccountLocked, type LockNoticeDeps } from '../outbox/notices.js';
import type { RequestContext } from '../request-context.js';
import type { Stores } from '../stores.js';
import type { User } from '../users/user.js';
import type { PasswordHasher } from './hasher.js';

export const RECENT_SIGN_IN_MS = 10 * 60 * 1000;

/** What re-authentication uses: the password check, the login lock and its notice, the audit trail. */
export interface ReauthDeps {
  stores: Stores;
  hasher: PasswordHasher;
  loginLock: LoginLock;
  limits: RateLimits;
  /** The owner is told when failures lock their account (outbox/notices.ts), off the response path. */
  notices: LockNoticeDeps;
  background: BackgroundTasks;
}

/** The fields of `parts` re-authentication uses, for a capability that builds a flow on them (account, two-factor, passkeys). */
export function reauthDepsOf(parts: ReauthDeps): ReauthDeps {
  const { stores, hasher, loginLock, limits, notices, background } = parts;
  return { stores, hasher, loginLock, limits, notices, background };
}

export async function reauthenticate(
  deps: ReauthDeps,
  user: User,
  session: { createdAt: Date },
  currentPassword: string | undefined,
  ctx: RequestContext,
): Promise<void> {
  if (user.passwordHash === null) {
    if (ctx.now.getTime() - session.createdAt.getTime() < RECENT_SIGN_IN_MS) return;
    throw forbidden('reauthentication_required', 'Sign in again to do this: your sign-in is more than 10 minutes old.');
  }
  if (currentPassword === undefined) throw forbidden('reauthentication_required', 'Enter your current password to do this.');
  // Every check is a bcrypt verification on the pool logins share: right passwords count too, or
  // one signed-in person could keep that pool busy for everyone (per user and per IP).
  await deps.limits.consume('reauthenticate', { userId: user.id }, ctx.now);
  await deps.limits.consume('reauthenticate', { ip: ctx.ip }, ctx.now);

  const subjects: LockSubject[] = user.email !== null ? [{ email: user.email }] : [{ ip: ctx.ip }];
  const reservation = await deps.loginLock.reserve(subjects, ctx.now);
  if ('lockedForSeconds' in reservation) {
    throw tooManyRequests('account_locked', 'Too many failed attempts. Try again later.', reservation.lockedForSeconds);
  }
  if ('busyForSeconds' in reservation) {
    throw tooManyRequests('rate_limited', 'Too many attempts at once. Try again in a moment.', reservation.busyForSeconds);
  }
  try {
    if (!(await deps.hasher.verify(currentPassword, user.passwordHash))) {
      const lockedNow = await deps.loginLock.recordFailure(reservation.reserved, ctx.now);
      if (lockedNow.some((subject) => 'email' in subject)) noticeAccountLocked(deps, user, ctx.now);
      await recordAudit(deps.stores.audit, ctx, 'login_failure', user.id, {
        email: user.email,
        reason: 'wrong_password',
        method: 'reauthentication',
        ...(lockedNow.length > 0 ? { lockStarted: true } : {}),
      });
      throw unauthorized('invalid_credentials', 'The current password is incorrect.');
    }
    // As a login: the right password clears the email's failures (never an IP's).
    await deps.loginLock.recordSuccess(
      ctx.now,
      subjects.filter((subject) => 'email' in subject),
    );
  } finally {
    await deps.loginLock.release(reservation.reserved);
  }
}
