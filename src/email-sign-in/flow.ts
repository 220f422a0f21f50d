/**
 * @module Passwordless sign-in by email (DESIGN §9.9): one request mails a link
 * `{BASE_URL}/email-sign-in?token=<id>.<secret>` and a 6-digit code, both for 15 minutes; using
 * either spends both (one row, deleted by exactly one request). A newer request replaces the
 * older one.
 *
 *   request ──► pending (15 min) ──POST verify {token} or {email, code}──► deleted; session (or 2FA challenge)
 *                 │                     └── 5 wrong codes ──► the code is dead (the link still works)
 *                 └── 15 min pass, or a newer request ──► refused
 *
 * At rest: the SHA-256 of the link's secret, and an HMAC of the code under a key derived from
 * JWT_SECRET (a plain hash of a 6-digit code falls to a million guesses offline). Wrong codes are
 * failed logins of the address for the login lock, known or not, and answer alike (no oracle).
 */
import type { Language } from '../i18n/languages.js';
import type { TemplateOverrides } from '../outbox/template-overrides.js';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { recordAudit } from '../audit/record.js';
import type { BackgroundTasks } from '../background.js';
import { hexDigestsEqual, sha256Hex } from '../crypto/digest.js';
import { deriveKey } from '../crypto/mac.js';
import { createOneTimeToken, parseOneTimeToken } from '../crypto/one-time-token.js';
import { AppError, badRequest, tooManyRequests, unauthorized } from '../errors.js';
import type { LockSubject, LoginLock } from '../limits/login-lock.js';
import type { RateLimits } from '../limits/rate-limits.js';
import { isSecondFactorRequired } from '../credentials/second-factor.js';
import { noticeAccountLocked, queueSecurityNotice, type LockNoticeDeps } from '../outbox/notices.js';
import { queueEmail } from '../outbox/queue.js';
import { renderAccountSecuredEmail, renderEmailSignInEmail } from '../outbox/templates.js';
import { randomBytes, type RandomReader } from '../random.js';
import type { RequestContext } from '../request-context.js';
import { issueSession, refuseDisabledSignIn, type IssuedSession, type SessionDeps } from '../session/flow.js';
import type { Stores } from '../stores.js';
import { secureForMailboxProof } from '../users/secure-unverified.js';
import { rememberLanguage, type User } from '../users/user.js';
import { emitEvent } from '../webhooks/events.js';
import type { EmailSignInRecord } from './store.js';

export const EMAIL_SIGN_IN_LIFETIME_MS = 15 * 60 * 1000;
/** Wrong codes after which the code of one request is dead. */
export const MAX_CODE_ATTEMPTS = 5;
const CODE_DIGITS = 6;
const CODE_SPACE = 10 ** CODE_DIGITS;

export type EmailSignInMethod = 'email_link' | 'email_code';

export interface EmailSignInDeps {
  stores: Stores;
  random: RandomReader;
  baseUrl: string;
  appName: string;
  /** DEFAULT_LANGUAGE: the language of emails to an account that has none. */
  defaultLanguage?: Language;
  /** EMAIL_TEMPLATES_DIR's overrides (config.emailTemplates): each email asks them first. */
  emailTemplates?: TemplateOverrides | null;
  /** EMAIL_SIGN_IN_SIGNUP: an unknown address is mailed too, and its first use creates the account. */
  signup: boolean;
  /** HMAC key of the stored codes (`createSignInCodeKey`). */
  codeKey: Uint8Array;
  limits: RateLimits;
  loginLock: LoginLock;
  session: SessionDeps;
  /** The owner is told when wrong codes lock the account (outbox/notices.ts). */
  notices: LockNoticeDeps;
  background: BackgroundTasks;
  onEmailQueued: () => void;
}

export type EmailSignInOutcome =
  | { kind: 'session'; user: User; session: IssuedSession; returnTo: string | null }
  | { kind: 'second_factor'; user: User; method: EmailSignInMethod; returnTo: string | null };

/** Its own HKDF label: the code key opens nothing else signed with JWT_SECRET. */
export function createSignInCodeKey(jwtSecret: string): Uint8Array {
  return deriveKey(jwtSecret, 'gatehouse email sign-in code v1');
}

/** Bound to the row's id, so one code's MAC says nothing about another request's. */
function codeMac(key: Uint8Array, id: string, code: string): string {
  return createHmac('sha256', key).update(`${id}:${code}`, 'utf8').digest('hex');
}

/** A uniform 6-digit code (rejection sampling: no digit more likely than another). */
function randomCode(random: RandomReader): string {
  const limit = Math.floor(2 ** 32 / CODE_SPACE) * CODE_SPACE;
  for (;;) {
    const value = Buffer.from(randomBytes(random, 4)).readUInt32BE(0);
    if (value < limit) return String(value % CODE_SPACE).padStart(CODE_DIGITS, '0');
  }
}

export function emailSignInUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/email-sign-in?token=${encodeURIComponent(token)}`;
}

/** Counts a request per IP and per address (unknown addresses too: a 429 reveals nothing). */
export async function limitEmailSignInRequest(deps: Pick<EmailSignInDeps, 'limits'>, email: string, ctx: RequestContext): Promise<void> {
  await deps.limits.consume('emailSignIn', { ip: ctx.ip }, ctx.now);
  await deps.limits.consume('emailSignIn', { email }, ctx.now);
}

/**
 * Replaces the address's pending sign-in and queues its email, in one transaction. Returns the
 * token, link and code for development mode for a known address; null otherwise. Outside
 * development mode the caller answers first and runs this off the response path, so the answer
 * takes the same time for every address.
 */
export async function requestEmailSignIn(
  deps: EmailSignInDeps,
  input: { email: string; returnTo: string | null },
  ctx: RequestContext,
): Promise<{ token: string; url: string; code: string } | null> {
  const user = await deps.stores.users.findUserByEmail(input.email);
  const { id, secret, token } = createOneTimeToken(deps.random);
  const code = randomCode(deps.random);
  // Unknown addresses get no email at all unless sign-up by email is on.
  if (user === null && !deps.signup) return null;
  const expiresAt = new Date(ctx.now.getTime() + EMAIL_SIGN_IN_LIFETIME_MS);
  const url = emailSignInUrl(deps.baseUrl, token);
  const recipient = user?.email ?? input.email;
  await deps.stores.transaction(async (tx) => {
    await tx.emailSignIns.replaceEmailSignIn({
      id,
      email: recipient,
      userId: user?.id ?? null,
      secretHash: sha256Hex(secret),
      codeMac: codeMac(deps.codeKey, id, code),
      returnTo: input.returnTo,
      expiresAt,
      createdAt: ctx.now,
    });
    await queueEmail(
      tx.outbox,
      recipient,
      renderEmailSignInEmail({
        appName: deps.appName,
        url,
        code,
        lifetimeMinutes: EMAIL_SIGN_IN_LIFETIME_MS / 60_000,
        // A sign-up by email: the language of the page that asked.
        language: user === null ? ctx.language : user.language,
        defaultLanguage: deps.defaultLanguage,
        emailTemplates: deps.emailTemplates,
      }),
      {
        now: ctx.now,
        linkExpiresAt: expiresAt,
      },
    );
  });
  deps.onEmailQueued();
  return user !== null ? { token, url, code } : null;
}

const INVALID_TOKEN_MESSAGE = 'This sign-in link is invalid, expired or already used. Ask for a new one.';
const INVALID_CODE_MESSAGE = 'That code is not right, or it has expired. Check the email, or ask for a new one.';

/**
 * The address a live link signs into, read without spending it, for the page: a link someone else
 * requested and sent to the person would otherwise swap their session for the sender's account
 * without a word. Null for anything but a live link.
 */
export async function describeEmailSignInLink(deps: Pick<EmailSignInDeps, 'stores'>, token: string, now: Date): Promise<{ email: string } | null> {
  const parts = parseOneTimeToken(token);
  const record = parts ? await deps.stores.emailSignIns.findEmailSignInById(parts.id) : null;
  if (parts === null || record === null || !hexDigestsEqual(sha256Hex(parts.secret), record.secretHash) || record.expiresAt.getTime() <= now.getTime()) {
    return null;
  }
  return { email: record.email };
}

/** Signs in with the link's token: 400 invalid_token for anything but a live one. */
export async function verifyEmailSignInLink(deps: EmailSignInDeps, token: string, ctx: RequestContext): Promise<EmailSignInOutcome> {
  await deps.limits.consume('verifyEmail', { ip: ctx.ip }, ctx.now);
  const parts = parseOneTimeToken(token);
  const record = parts ? await deps.stores.emailSignIns.findEmailSignInById(parts.id) : null;
  const live =
    parts !== null && record !== null && hexDigestsEqual(sha256Hex(parts.secret), record.secretHash) && record.expiresAt.getTime() > ctx.now.getTime();
  const user = live && record !== null ? await spendAndResolveUser(deps, record, null, ctx) : null;
  if (record === null || user === null) {
    await recordAudit(deps.stores.audit, ctx, 'login_failure', null, { reason: 'invalid_token', method: 'email_link' });
    throw badRequest('invalid_token', INVALID_TOKEN_MESSAGE);
  }
  // The link proves control of the mailbox, as a reset does: the address's failures and lock are forgotten.
  return finishSignIn(deps, user, 'email_link', record.returnTo, ctx, () => deps.loginLock.clearEmail(record.email, ctx.now));
}

/**
 * Signs in with the address and the code, counted by the login lock like a password: reserve →
 * check → record → release. An unknown address, an expired or dead code and a wrong code all
 * answer 401 invalid_code, and all count as failures of the address.
 */
export async function verifyEmailSignInCode(deps: EmailSignInDeps, input: { email: string; code: string }, ctx: RequestContext): Promise<EmailSignInOutcome> {
  await deps.limits.consume('verifyEmail', { ip: ctx.ip }, ctx.now);
  // The login lock ends after its duration; this bounds what a patient guesser tries against one
  // address in a day (RATE_LIMIT_EMAIL_SIGN_IN_CODE_DAILY wrong codes, then none until it ends).
  try {
    await deps.limits.assertAllowance('emailSignInCodeDaily', { email: input.email }, ctx.now);
  } catch (error) {
    await recordAudit(deps.stores.audit, ctx, 'login_failure', null, { email: input.email, reason: 'daily_code_limit', method: 'email_code' });
    throw error;
  }
  const subjects: LockSubject[] = [{ email: input.email }, { ip: ctx.ip }];
  const refuse = async (reason: 'locked' | 'busy', error: AppError): Promise<never> => {
    await recordAudit(deps.stores.audit, ctx, 'login_failure', null, { email: input.email, reason, method: 'email_code' });
    throw error;
  };
  const reservation = await deps.loginLock.reserve(subjects, ctx.now);
  if ('lockedForSeconds' in reservation) {
    return refuse('locked', tooManyRequests('account_locked', 'Too many failed sign-ins. Try again later.', reservation.lockedForSeconds));
  }
  if ('busyForSeconds' in reservation) {
    return refuse('busy', tooManyRequests('rate_limited', 'Too many sign-in attempts at once. Try again in a moment.', reservation.busyForSeconds));
  }
  let signedIn: { user: User; record: EmailSignInRecord };
  try {
    const record = await deps.stores.emailSignIns.findEmailSignInByEmail(input.email);
    const code = input.code.replace(/[\s-]/g, '');
    // Always one MAC and one comparison, with or without a row.
    const expected = Buffer.from(record?.codeMac ?? '0'.repeat(64), 'hex');
    const presented = Buffer.from(codeMac(deps.codeKey, record?.id ?? 'none', code), 'hex');
    const matches = timingSafeEqual(expected, presented) && record !== null;
    const usable = record !== null && record.expiresAt.getTime() > ctx.now.getTime() && record.codeAttempts < MAX_CODE_ATTEMPTS;
    const user = matches && usable ? await spendAndResolveUser(deps, record, MAX_CODE_ATTEMPTS, ctx) : null;
    if (record === null || user === null) {
      // A wrong code for a live row counts toward killing that code.
      if (record !== null && !matches && usable) await deps.stores.emailSignIns.countWrongCode(record.id, MAX_CODE_ATTEMPTS);
      await countDailyWrongCode(deps, input.email, ctx.now);
      const lockedNow = await deps.loginLock.recordFailure(reservation.reserved, ctx.now);
      const owner = await deps.stores.users.findUserByEmail(input.email);
      if (owner !== null && lockedNow.some((subject) => 'email' in subject)) noticeAccountLocked(deps, owner, ctx.now);
      await recordAudit(deps.stores.audit, ctx, 'login_failure', owner?.id ?? null, {
        email: input.email,
        reason: 'wrong_code',
        method: 'email_code',
        ...(lockedNow.length > 0 ? { lockStarted: true } : {}),
      });
      throw unauthorized('invalid_code', INVALID_CODE_MESSAGE);
    }
    signedIn = { user, record };
  } finally {
    await deps.loginLock.release(reservation.reserved);
  }
  return finishSignIn(deps, signedIn.user, 'email_code', signedIn.record.returnTo, ctx, () => deps.loginLock.recordSuccess(ctx.now, [{ email: input.email }]));
}

/** One wrong code against the address's daily budget; the refusal itself comes at the next try (assertAllowance). */
async function countDailyWrongCode(deps: EmailSignInDeps, email: string, now: Date): Promise<void> {
  try {
    await deps.limits.consume('emailSignInCodeDaily', { email }, now);
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'rate_limited') throw error;
  }
}

/**
 * Spends the row and finds (or, with sign-up on, creates) its user, in one transaction; null when
 * another request spent it first. The email becomes verified. An unverified account that had a
 * password may have been registered by someone else (account pre-hijacking): its password and
 * sessions do not survive the mailbox's owner signing in.
 */
async function spendAndResolveUser(
  deps: EmailSignInDeps,
  record: EmailSignInRecord,
  maxCodeAttempts: number | null,
  ctx: RequestContext,
): Promise<User | null> {
  const outcome = await deps.stores.transaction(async (tx) => {
    if (!(await tx.emailSignIns.spendEmailSignIn(record.id, { maxCodeAttempts }))) return null;
    let user = record.userId !== null ? await tx.users.findUserById(record.userId) : await tx.users.findUserByEmail(record.email);
    let created = false;
    if (user === null && record.userId === null && deps.signup) {
      const id = randomUUID();
      // Taken a moment ago by a registration: refused (on PostgreSQL the failed insert ended the transaction).
      if (
        (await tx.users.createUser({
          id,
          email: record.email,
          passwordHash: null,
          emailVerified: true,
          createdAt: ctx.now,
          language: ctx.language ?? null,
        })) === 'email_taken'
      )
        return null;
      created = true;
      user = await tx.users.findUserById(id);
    }
    // The account's address changed since the request: the link was mailed to the old one.
    if (user === null || user.email !== record.email) return null;
    if (created) await emitEvent(tx, ctx.now, 'user.created', user, { method: 'email', emailVerified: true });
    // A sign-in by a proof of the mailbox, as a provider link (oauth/flow.ts): nothing the
    // registrant may have planted survives, and the person is told why their password is gone.
    // Its sessions end on a proof of the mailbox: no reason of its own in the catalogue, `revoked`.
    const secured = created ? null : await secureForMailboxProof(tx, user, { now: ctx.now, sessionsRevokedReason: 'revoked' });
    let notified = false;
    if (secured?.passwordRemoved === true) {
      notified = await queueSecurityNotice(
        deps.notices,
        tx.outbox,
        { userId: user.id, email: record.email },
        renderAccountSecuredEmail({ ...deps, language: user.language }),
        ctx.now,
      );
    }
    const fresh = await tx.users.findUserById(user.id);
    return fresh === null ? null : { user: fresh, created, secured, notified, wasVerified: user.emailVerified };
  });
  if (outcome === null) return null;
  if (outcome.notified) deps.onEmailQueued();
  if (outcome.created) await recordAudit(deps.stores.audit, ctx, 'user_created', outcome.user.id, { email: outcome.user.email, method: 'email' });
  if (outcome.secured !== null && !outcome.created) {
    await recordAudit(deps.stores.audit, ctx, 'config_updated', outcome.user.id, {
      action: 'unverified_account_secured_for_email_sign_in',
      email: outcome.user.email,
      // A verified address whose password was chosen before it was proved (and never confirmed since).
      passwordUnproven: outcome.wasVerified,
      ...outcome.secured,
    });
  }
  return outcome.user;
}

async function finishSignIn(
  deps: EmailSignInDeps,
  user: User,
  method: EmailSignInMethod,
  returnTo: string | null,
  ctx: RequestContext,
  forgetFailures: () => Promise<void>,
): Promise<EmailSignInOutcome> {
  if (user.disabledAt !== null) await refuseDisabledSignIn(deps.stores.audit, ctx, user, { email: user.email, method });
  // As after a right password (mfa/flow.ts): the first factor does not clear the failed codes of a
  // 2FA account, so each new email buys no more authenticator guesses.
  if (await isSecondFactorRequired(deps, user.id)) return { kind: 'second_factor', user, method, returnTo };
  await forgetFailures();
  await deps.stores.users.recordLogin(user.id, ctx.now);
  await rememberLanguage(deps.stores.users, user, ctx.language);
  const session = await issueSession(deps.session, user, ctx, [method]);
  await recordAudit(deps.stores.audit, ctx, 'login_success', user.id, { email: user.email, method });
  return { kind: 'session', user, session, returnTo };
}
