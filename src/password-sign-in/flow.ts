/**
 * @module Register and log in with email and password, in the spec's order of work (SPEC §4):
 * the body is validated by the route; each flow starts with its rate limit, and login then checks
 * the login lock before it looks at the user, so a locked email or IP costs no bcrypt work.
 */
import { randomUUID } from 'node:crypto';
import type { AuditStore } from '../audit/audit-log.js';
import { recordAudit } from '../audit/record.js';
import { issueVerificationEmail, type IssuedLink, type VerificationDeps } from '../email-verification/flow.js';
import { AppError, conflict, tooManyRequests, unauthorized } from '../errors.js';
import { issueDeviceToken, readDeviceToken } from '../limits/device-token.js';
import type { LockSubject, LoginLock } from '../limits/login-lock.js';
import type { RateLimits } from '../limits/rate-limits.js';
import type { BackgroundTasks } from '../background.js';
import { noticeAccountLocked, type LockNoticeDeps } from '../outbox/notices.js';
import type { RandomReader } from '../random.js';
import type { RequestContext } from '../request-context.js';
import { issueSession, refuseDisabledSignIn, type IssuedSession, type SessionDeps } from '../session/flow.js';
import type { Stores } from '../stores.js';
import { emitEvent } from '../webhooks/events.js';
import { rememberLanguage, type User } from '../users/user.js';
import { assertNotBreached, type BreachCheck } from '../credentials/breach-check.js';
import { assertNotContextPassword, contextWordsFor } from '../credentials/common-passwords.js';
import { isSecondFactorRequired } from '../credentials/second-factor.js';
import type { PasswordHasher } from '../credentials/hasher.js';

export interface PasswordFlowDeps {
  stores: Stores;
  hasher: PasswordHasher;
  /** PASSWORD_BREACH_CHECK: null when off. */
  breachCheck: BreachCheck | null;
  session: SessionDeps;
  verification: Omit<VerificationDeps, 'stores'>;
  limits: RateLimits;
  loginLock: LoginLock;
  /** Signs and checks device tokens (limits/device-token.ts). */
  device: { key: Uint8Array; random: RandomReader };
  /** The owner is told when failures lock their account (outbox/notices.ts), off the response path. */
  notices: LockNoticeDeps;
  background: BackgroundTasks;
}

export interface SignedIn {
  user: User;
  session: IssuedSession;
}

export interface Registered extends SignedIn {
  verification: IssuedLink;
}

export interface LoggedIn extends SignedIn {
  /** A fresh device token for the browser's device cookie. */
  deviceToken: string;
}

/** The password was right, and the account asks for a second factor: no session yet (mfa/flow.ts). */
export interface SecondFactorNeeded {
  secondFactorFor: User;
}

export interface Credentials {
  /** Already trimmed and lower-cased by the schema. */
  email: string;
  password: string;
}

export async function registerWithPassword(deps: PasswordFlowDeps, credentials: Credentials, ctx: RequestContext): Promise<Registered> {
  // Still validation, so before the limit: a refused body does not use up the allowance.
  assertNotContextPassword(credentials.password, contextWordsFor(deps.verification.appName, credentials.email));
  await deps.limits.consume('register', { ip: ctx.ip }, ctx.now);
  const { users } = deps.stores;
  // Checked before hashing so a taken email costs no bcrypt work; the unique index below
  // still decides a race between two registrations of one email.
  if ((await users.findUserByEmail(credentials.email)) !== null) {
    throw conflict('email_exists', 'An account with this email already exists.');
  }
  // After the limit: each check is a call to a third party, which nobody may run in a loop.
  await assertNotBreached(deps.breachCheck, credentials.password);
  const passwordHash = await deps.hasher.hash(credentials.password);
  const user: User = {
    id: randomUUID(),
    email: credentials.email,
    emailVerified: false,
    passwordHash,
    createdAt: ctx.now,
    lastLoginAt: null,
    disabledAt: null,
    passwordUnproven: true,
    language: ctx.language ?? null,
  };
  // The user, its verification token and the queued email exist together or not at all.
  const verification = await deps.stores.transaction(async (tx) => {
    if ((await tx.users.createUser(user)) === 'email_taken') return null;
    await emitEvent(tx, ctx.now, 'user.created', user, { method: 'password', emailVerified: false });
    return issueVerificationEmail(tx, deps.verification, { id: user.id, email: credentials.email, language: user.language }, ctx.now);
  });
  if (verification === null) throw conflict('email_exists', 'An account with this email already exists.');
  deps.verification.onEmailQueued();
  const session = await issueSession(deps.session, user, ctx, ['password']);
  await recordAudit(deps.stores.audit, ctx, 'user_created', user.id, { email: user.email, method: 'password' });
  return { user, session, verification };
}

/**
 * The audit row of a login refused by its rate limit. A flood reads no database: the email only,
 * never the account. Also written by the login's fast path (fast-path.ts).
 */
export function recordRateLimitedLogin(audit: AuditStore, ctx: RequestContext, email: string): Promise<void> {
  return recordAudit(audit, ctx, 'login_failure', null, { email, reason: 'rate_limited', method: 'password' });
}

export async function loginWithPassword(
  deps: PasswordFlowDeps,
  credentials: Credentials,
  ctx: RequestContext,
  options: { deviceToken?: string | undefined } = {},
): Promise<LoggedIn | SecondFactorNeeded> {
  const { users, audit } = deps.stores;
  const refuse = async (reason: 'rate_limited' | 'locked' | 'busy', error: AppError): Promise<never> => {
    // A lock's refusal is kept against the account when there is one, so that the owner's failed
    // sign-ins show under `audit --user`. Either way the answer is the same, known email or not.
    if (reason === 'rate_limited') await recordRateLimitedLogin(audit, ctx, credentials.email);
    else {
      const user = await users.findUserByEmail(credentials.email);
      await recordAudit(audit, ctx, 'login_failure', user?.id ?? null, { email: credentials.email, reason, method: 'password' });
    }
    throw error;
  };
  // Which lock holds, said without telling whether the account exists: an unknown email is
  // counted and locked exactly like a known one.
  const lockedAnswer = async (seconds: number): Promise<never> => {
    const addressLocked = device === null && (await deps.loginLock.lockedForSeconds([{ ip: ctx.ip }], ctx.now)) !== null;
    const message = addressLocked
      ? 'Too many failed sign-ins from your network address. Try again later, or ask the administrator to lift the lock.'
      : 'Too many failed sign-ins for this email address. Try again later, or reset your password.';
    return refuse('locked', tooManyRequests('account_locked', message, seconds));
  };

  // A browser with a valid device token for this email is its own lane: failures from elsewhere
  // (the email's and the IP's locks) do not stop it, and its failures count against it alone.
  const device = options.deviceToken === undefined ? null : readDeviceToken(deps.device.key, options.deviceToken, credentials.email);
  const subjects: LockSubject[] = device !== null ? [{ device: device.nonce }] : [{ email: credentials.email }, { ip: ctx.ip }];

  // An address this instance already refused in this window is refused again before any store
  // is asked (rate-limits.ts): a flood over the limit reads no lock either.
  const refusedAlready = deps.limits.refusedAlready('login', { ip: ctx.ip }, ctx.now);
  if (refusedAlready !== null) return refuse('rate_limited', refusedAlready);
  // Otherwise the rate limit is counted and the lock read at once: in Redis both go out in one
  // round trip (limiter-backend.ts pipelines what is asked together). The rate limit decides first.
  const [rateLimit, locked] = await Promise.allSettled([
    deps.limits.consume('login', { ip: ctx.ip }, ctx.now),
    deps.loginLock.lockedForSeconds(subjects, ctx.now),
  ]);
  if (rateLimit.status === 'rejected') {
    const error: unknown = rateLimit.reason;
    if (error instanceof AppError && error.code === 'rate_limited') await refuse('rate_limited', error);
    throw error;
  }
  if (locked.status === 'rejected') throw locked.reason;
  if (locked.value !== null) return lockedAnswer(locked.value);

  // Let through only while the failures plus the attempts in flight stay under the limit, so
  // concurrent guesses cannot all slip past the lock (login-lock.ts).
  const reservation = await deps.loginLock.reserve(subjects, ctx.now);
  if ('lockedForSeconds' in reservation) return lockedAnswer(reservation.lockedForSeconds);
  if ('busyForSeconds' in reservation) {
    return refuse('busy', tooManyRequests('rate_limited', 'Too many sign-in attempts at once. Try again in a moment.', reservation.busyForSeconds));
  }
  const attempt = reservation.reserved;
  let user: User | null;
  let secondFactor: boolean;
  try {
    user = await users.findUserByEmail(credentials.email);
    // Always one bcrypt compare, against a dummy hash when there is no user, so an unknown email
    // answers in the time of a wrong password and cannot be told apart (account enumeration).
    const passwordMatches = await deps.hasher.verify(credentials.password, user?.passwordHash ?? null);
    if (user === null || !passwordMatches) {
      // Unknown emails are counted and locked like known ones: a lock must not reveal an account.
      const lockedNow = await deps.loginLock.recordFailure(attempt, ctx.now);
      if (user !== null && lockedNow.some((subject) => 'email' in subject)) noticeAccountLocked(deps, user, ctx.now);
      await recordAudit(audit, ctx, 'login_failure', user?.id ?? null, {
        email: credentials.email,
        reason: user === null ? 'unknown_email' : 'wrong_password',
        method: 'password',
        ...(lockedNow.length > 0 ? { lockStarted: true } : {}),
      });
      throw unauthorized('invalid_credentials', 'The email or password is incorrect.');
    }
    // Only after the right password, so the answer tells the state to nobody without it; before a
    // second factor is asked for. Not a failure of the lock: the password was right.
    if (user.disabledAt !== null) await refuseDisabledSignIn(audit, ctx, user, { email: credentials.email, method: 'password' });
    // With a second factor to come, the right password clears nothing: otherwise knowing it would
    // reset the count of wrong codes at will (mfa/flow.ts clears it when the code is right).
    secondFactor = await isSecondFactorRequired(deps, user.id);
    // A successful login clears the failures counted against the email (SPEC §8), whichever lane
    // it came through, and the device's own. Not the IP's: one's own account between guesses at
    // others would otherwise reset a spraying address's count.
    if (!secondFactor)
      await deps.loginLock.recordSuccess(ctx.now, device === null ? [{ email: credentials.email }] : [{ device: device.nonce }, { email: credentials.email }]);
  } finally {
    // Whatever happened (a failure, a success, a full hash pool, a database error): the attempt
    // is no longer in flight.
    await deps.loginLock.release(attempt);
  }
  if (user.passwordHash !== null && deps.hasher.needsRehash(user.passwordHash)) rehashOffThePath(deps, user.id, user.passwordHash, credentials.password);
  if (secondFactor) return { secondFactorFor: user };
  await users.recordLogin(user.id, ctx.now);
  await rememberLanguage(users, user, ctx.language);
  const session = await issueSession(deps.session, user, ctx, ['password']);
  // A new nonce at every login (OWASP): a token that leaked from an old login stops counting.
  const deviceToken = issueDeviceToken(deps.device.key, credentials.email, deps.device.random);
  await recordAudit(audit, ctx, 'login_success', user.id, { email: user.email, method: 'password' });
  return { user: { ...user, lastLoginAt: ctx.now }, session, deviceToken };
}

/**
 * BCRYPT_ROUNDS changed since this hash was made: the only moment the password is at hand is a
 * successful login, so it is hashed again at the configured cost then, off the response path (a
 * second bcrypt would double the login's time). The store replaces the hash only if it is still
 * the one checked, so a password changed meanwhile is never overwritten.
 */
function rehashOffThePath(deps: Pick<PasswordFlowDeps, 'hasher' | 'stores' | 'background'>, userId: string, previousHash: string, password: string): void {
  deps.background.run('password rehash', async () => {
    await deps.stores.users.rehashPassword(userId, previousHash, await deps.hasher.hash(password));
  });
}
