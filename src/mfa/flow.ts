/**
 * @module Two-factor sign-in with an authenticator app (TOTP) and recovery codes (DESIGN §9.3).
 *
 *   setup (re-authenticated) ──► pending secret ──enable with a right code──► enabled (+10 recovery codes)
 *                                                                               │
 *   disable (re-authenticated) ◄────────────────────────────────────────────────┘
 *
 * With 2FA enabled, the first factor (the right password, or a provider sign-in) gives only a
 * challenge (challenge.ts); `verifySecondFactor` turns it and a code into a session. Wrong codes
 * are failed logins of the email for the login lock, and the first factor succeeding does not
 * clear them, so a known password does not buy unlimited code guesses. Each code is accepted
 * once: its time step is recorded in the database, so a replay fails on every instance.
 */
import { createHmac } from 'node:crypto';
import { reauthenticate, type ReauthDeps } from '../credentials/reauthenticate.js';
import { isSecondFactorRequired } from '../credentials/second-factor.js';
import { recordAudit } from '../audit/record.js';
import type { Envelope } from '../crypto/envelope.js';
import { deriveKey } from '../crypto/mac.js';
import { badRequest, conflict, forbidden, serviceUnavailable, tooManyRequests, unauthorized } from '../errors.js';
import type { LockSubject } from '../limits/login-lock.js';
import type { RateLimits } from '../limits/rate-limits.js';
import type { ConsumedSignInStore } from '../oauth/store.js';
import { noticeAccountLocked } from '../outbox/notices.js';
import { randomBytes, type RandomReader } from '../random.js';
import type { RequestContext } from '../request-context.js';
import { issueSession, refuseDisabledSignIn, reportSessionsRevoked, type IssuedSession, type SessionDeps, type ValidSession } from '../session/flow.js';
import { emitEvent } from '../webhooks/events.js';
import type { User } from '../users/user.js';
import { readChallenge, type Challenge } from './challenge.js';
import { generateTotpSecret, matchTotpStep, totpUri } from './totp.js';

const RECOVERY_CODE_COUNT = 10;
/** Lower-case letters and digits without the look-alikes 0, 1, l, o: 31 symbols. */
const RECOVERY_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';

export interface MfaDeps extends ReauthDeps {
  random: RandomReader;
  appName: string;
  limits: RateLimits;
  session: SessionDeps;
  /** Signs the challenge cookie (challenge.ts). */
  challengeKey: Uint8Array;
  /** Where a succeeded challenge's id is recorded, so it works once. */
  spentChallenges: Pick<ConsumedSignInStore, 'consumeSignIn'>;
  /** Seals TOTP secrets; null without a key (ENCRYPTION_KEY_BASE64), and setup then answers 503. */
  envelope: Envelope | null;
  /** Finishes what the first step left waiting for the code (a provider link: oauth/flow.ts), before the session is issued. */
  afterSecondFactor?: (challenge: Challenge, ctx: RequestContext) => Promise<void>;
}

export interface MfaStatus {
  totp: { enabled: boolean };
  recoveryCodesLeft: number;
}

export async function mfaStatus(deps: Pick<MfaDeps, 'stores'>, userId: string): Promise<MfaStatus> {
  const totp = await deps.stores.totp.findTotp(userId);
  return { totp: { enabled: totp !== null && totp.enabledAt !== null }, recoveryCodesLeft: await deps.stores.recoveryCodes.countUnusedRecoveryCodes(userId) };
}

function requireEnvelope(deps: Pick<MfaDeps, 'envelope'>): Envelope {
  if (deps.envelope === null) {
    throw serviceUnavailable('Two-factor sign-in is not available: ENCRYPTION_KEY_BASE64 is not set (base64 of 32 random bytes: openssl rand -base64 32).');
  }
  return deps.envelope;
}

/** The secret is bound to its user: a sealed value copied to another row does not open. */
const sealedFor = (userId: string): string => `totp:${userId}`;

function openSecret(deps: Pick<MfaDeps, 'envelope'>, userId: string, sealed: string): string {
  const secret = requireEnvelope(deps).open(sealed, sealedFor(userId));
  if (secret === null) throw serviceUnavailable('The two-factor secret cannot be read with the configured ENCRYPTION_KEY_BASE64.');
  return secret;
}

export async function startTotpSetup(
  deps: MfaDeps,
  signedIn: ValidSession,
  currentPassword: string | undefined,
  ctx: RequestContext,
): Promise<{ secret: string; otpauthUrl: string; qrSvg: string }> {
  const envelope = requireEnvelope(deps);
  // An unverified address may not be its owner's (account pre-hijacking): a second factor set up
  // by a squatter would lock the real owner out once they claim the address.
  if (signedIn.user.email !== null && !signedIn.user.emailVerified) {
    throw forbidden('email_not_verified', 'Verify your email address before you turn on two-factor sign-in.');
  }
  await reauthenticate(deps, signedIn.user, signedIn.session, currentPassword, ctx);
  const secret = generateTotpSecret(deps.random);
  const saved = await deps.stores.totp.savePendingTotp(signedIn.user.id, envelope.seal(secret, sealedFor(signedIn.user.id)), ctx.now);
  if (saved === 'enabled') throw conflict('mfa_already_enabled', 'Two-factor sign-in is already on. Turn it off first to set up a new authenticator.');
  const otpauthUrl = totpUri(deps.appName, signedIn.user.email ?? signedIn.user.id, secret);
  // An SVG made here (no third party sees the secret, no external image); presentation
  // attributes only, no inline style, which the pages' CSP forbids.
  // Loaded on first use: most processes never set up an authenticator (DESIGN §10, memory).
  const { default: QRCode } = await import('qrcode');
  const qrSvg = await QRCode.toString(otpauthUrl, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  return { secret, otpauthUrl, qrSvg };
}

function newRecoveryCodes(random: RandomReader): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    // 10 symbols of 31: about 50 bits each; the modulo bias of 256 % 31 is negligible at that size.
    const symbols = Array.from(randomBytes(random, 10), (byte) => RECOVERY_ALPHABET[byte % RECOVERY_ALPHABET.length]).join('');
    return `${symbols.slice(0, 5)}-${symbols.slice(5)}`;
  });
}

/** Codes are typed by people: case, spaces and dashes do not matter. */
function recoveryCodeHash(challengeKey: Uint8Array, code: string): string {
  // An HMAC under a key derived from JWT_SECRET (HKDF from the challenge key, its own label):
  // about 50 bits per code is too little to trust a plain hash with a stolen database.
  const key = deriveKey(challengeKey, 'gatehouse recovery codes v1');
  return createHmac('sha256', key).update(code.toLowerCase().replace(/[\s-]/g, ''), 'utf8').digest('hex');
}

async function replaceRecoveryCodes(deps: Pick<MfaDeps, 'stores' | 'random' | 'challengeKey'>, userId: string, now: Date): Promise<string[]> {
  const codes = newRecoveryCodes(deps.random);
  await deps.stores.recoveryCodes.replaceRecoveryCodes(
    userId,
    codes.map((code) => recoveryCodeHash(deps.challengeKey, code)),
    now,
  );
  return codes;
}

export async function enableTotp(deps: MfaDeps, signedIn: ValidSession, code: string, ctx: RequestContext): Promise<{ recoveryCodes: string[] }> {
  const { user } = signedIn;
  const pending = await deps.stores.totp.findTotp(user.id);
  if (pending === null || pending.enabledAt !== null) {
    throw badRequest(
      pending === null ? 'mfa_not_enabled' : 'mfa_already_enabled',
      pending === null ? 'Set up two-factor sign-in first.' : 'Two-factor sign-in is already on.',
    );
  }
  const step = matchTotpStep(openSecret(deps, user.id, pending.secretEnc), code, ctx.now);
  if (step === null) throw badRequest('invalid_code', 'That code is not right. Enter the 6-digit code your authenticator app shows now.');
  const enabled = await deps.stores.transaction(async (tx) => {
    if (!(await tx.totp.enableTotp(user.id, pending.secretEnc, step, ctx.now))) return null;
    const codes = await replaceRecoveryCodes({ stores: tx, random: deps.random, challengeKey: deps.challengeKey }, user.id, ctx.now);
    // Every other session was signed in with one factor: from now on the account asks for two, so
    // they end (a session someone else holds would otherwise outlive the new protection).
    const revokedIds = await tx.sessions.deleteUserSessionsReturningIds(user.id, signedIn.session.id);
    await emitEvent(tx, ctx.now, 'user.mfa_enabled', user, { method: 'totp' });
    // No reason of its own in the catalogue: the person's own "sign out everywhere else", in effect.
    await reportSessionsRevoked(tx, ctx.now, user, revokedIds, 'revoked_others');
    return { codes, sessionsRevoked: revokedIds.length };
  });
  if (enabled === null) throw badRequest('mfa_already_enabled', 'Two-factor sign-in is already on.');
  const recoveryCodes = enabled.codes;
  await recordAudit(deps.stores.audit, ctx, 'mfa_enabled', user.id, { method: 'totp', sessionsRevoked: enabled.sessionsRevoked });
  return { recoveryCodes };
}

export async function disableTotp(deps: MfaDeps, signedIn: ValidSession, currentPassword: string | undefined, ctx: RequestContext): Promise<void> {
  await reauthenticate(deps, signedIn.user, signedIn.session, currentPassword, ctx);
  await deps.stores.transaction(async (tx) => {
    // Reported only when it was on: removing a setup never confirmed turns nothing off.
    const totp = await tx.totp.findTotp(signedIn.user.id);
    const wasOn = totp !== null && totp.enabledAt !== null;
    await tx.totp.deleteTotp(signedIn.user.id);
    await tx.recoveryCodes.deleteRecoveryCodes(signedIn.user.id);
    if (wasOn) await emitEvent(tx, ctx.now, 'user.mfa_disabled', signedIn.user, { method: 'totp' });
  });
  await recordAudit(deps.stores.audit, ctx, 'mfa_disabled', signedIn.user.id, { method: 'totp' });
}

export async function regenerateRecoveryCodes(
  deps: MfaDeps,
  signedIn: ValidSession,
  currentPassword: string | undefined,
  ctx: RequestContext,
): Promise<{ recoveryCodes: string[] }> {
  await reauthenticate(deps, signedIn.user, signedIn.session, currentPassword, ctx);
  if (!(await isSecondFactorRequired(deps, signedIn.user.id)))
    throw badRequest('mfa_not_enabled', 'Two-factor sign-in is off: there are no recovery codes to renew.');
  // One transaction on the locked user row: two regenerations at once leave one set, never two.
  const recoveryCodes = await deps.stores.transaction(async (tx) => {
    await tx.users.lockUser(signedIn.user.id);
    return replaceRecoveryCodes({ stores: tx, random: deps.random, challengeKey: deps.challengeKey }, signedIn.user.id, ctx.now);
  });
  await recordAudit(deps.stores.audit, ctx, 'recovery_codes_regenerated', signedIn.user.id, {});
  return { recoveryCodes };
}

const EXPIRED_CHALLENGE_MESSAGE = 'This sign-in step has expired or was already used. Sign in again.';

/**
 * The second step of a sign-in: the challenge from the first step and a code from the
 * authenticator app or a recovery code. Gives the session; a wrong code is a failed login.
 */
export async function verifySecondFactor(
  deps: MfaDeps,
  challengeValue: string | undefined,
  input: { code?: string | undefined; recoveryCode?: string | undefined },
  ctx: RequestContext,
): Promise<{ session: IssuedSession; challenge: Challenge; user: User }> {
  await deps.limits.consume('mfaVerify', { ip: ctx.ip }, ctx.now);
  const challenge = readChallenge(deps.challengeKey, challengeValue, ctx.now);
  if (challenge === null) throw unauthorized('not_authenticated', EXPIRED_CHALLENGE_MESSAGE);
  const user = await deps.stores.users.findUserById(challenge.userId);
  const totp = user === null ? null : await deps.stores.totp.findTotp(user.id);
  if (user === null || totp === null || totp.enabledAt === null) throw unauthorized('not_authenticated', EXPIRED_CHALLENGE_MESSAGE);
  const method: 'totp' | 'recovery_code' = input.recoveryCode !== undefined ? 'recovery_code' : 'totp';
  // Disabled since the first step: no code is checked (the first factor already told the state).
  if (user.disabledAt !== null)
    await refuseDisabledSignIn(deps.stores.audit, ctx, user, { email: user.email, method: [...challenge.firstMethods, method].join('+') });

  // The account's own count: by its email, or by its id when it has none (a provider-only account).
  const account: LockSubject = user.email !== null ? { email: user.email } : { userId: user.id };
  const subjects: LockSubject[] = [account, { ip: ctx.ip }];
  const reservation = await deps.loginLock.reserve(subjects, ctx.now);
  if ('lockedForSeconds' in reservation) throw tooManyRequests('account_locked', 'Too many failed attempts. Try again later.', reservation.lockedForSeconds);
  if ('busyForSeconds' in reservation) throw tooManyRequests('rate_limited', 'Too many attempts at once. Try again in a moment.', reservation.busyForSeconds);
  try {
    const accepted =
      method === 'recovery_code'
        ? await deps.stores.recoveryCodes.useRecoveryCode(user.id, recoveryCodeHash(deps.challengeKey, input.recoveryCode ?? ''), ctx.now)
        : await acceptTotpCode(deps, user.id, totp.secretEnc, input.code ?? '', ctx.now);
    if (!accepted) {
      const lockedNow = await deps.loginLock.recordFailure(reservation.reserved, ctx.now);
      // The account's own lock (its email, or its id without one), not the IP's: the owner's account is locked.
      if (lockedNow.some((subject) => 'email' in subject || 'userId' in subject)) noticeAccountLocked(deps, user, ctx.now);
      await recordAudit(deps.stores.audit, ctx, 'mfa_failure', user.id, { email: user.email, method, ...(lockedNow.length > 0 ? { lockStarted: true } : {}) });
      throw unauthorized('invalid_code', 'That code is not right.');
    }
    // One use: of two requests with the same challenge (and two valid codes), one signs in.
    if (!(await deps.spentChallenges.consumeSignIn(`mfa:${challenge.id}`, challenge.expiresAt))) {
      throw unauthorized('not_authenticated', EXPIRED_CHALLENGE_MESSAGE);
    }
    await deps.loginLock.recordSuccess(ctx.now, [account]);
  } finally {
    await deps.loginLock.release(reservation.reserved);
  }
  await deps.afterSecondFactor?.(challenge, ctx);
  await deps.stores.users.recordLogin(user.id, ctx.now);
  const session = await issueSession(deps.session, user, ctx, [...challenge.firstMethods, method]);
  if (method === 'recovery_code')
    await recordAudit(deps.stores.audit, ctx, 'recovery_code_used', user.id, { left: await deps.stores.recoveryCodes.countUnusedRecoveryCodes(user.id) });
  await recordAudit(deps.stores.audit, ctx, 'login_success', user.id, { email: user.email, method: [...challenge.firstMethods, method].join('+') });
  return { session, challenge, user };
}

async function acceptTotpCode(deps: Pick<MfaDeps, 'stores' | 'envelope'>, userId: string, sealed: string, code: string, now: Date): Promise<boolean> {
  const step = matchTotpStep(openSecret(deps, userId, sealed), code.replace(/\s/g, ''), now);
  // The step is spent by the first request that records it: a replayed code finds it spent.
  return step !== null && deps.stores.totp.useTotpStep(userId, step);
}
