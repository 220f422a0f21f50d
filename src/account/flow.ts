/**
 * @module Account self-service (DESIGN §9.2): a signed-in person sees and ends their sessions,
 * changes their password and email address, unlinks a sign-in provider and deletes the account.
 * Each sensitive action re-authenticates first (credentials/reauthenticate.ts); each is audited, and the
 * owner is told by email of a changed password or address (outbox/notices.ts).
 *
 * Email change: a link goes to the NEW address (24 h, `<id>.<secret>`, only the SHA-256 of the
 * secret stored, queued in the same transaction as the token) and a notice to the old one; the
 * address changes only when the link is followed, and then it is verified.
 *
 *   request ──► pending (24 h) ──POST confirm──► email replaced, verified; old links die
 *                 │                    └── address taken meanwhile ──► 409, nothing changes
 *                 └── 24 h pass, or a newer request ──► dead
 */
import { releaseOrganizations } from '../organizations/memberships.js';
import type { Language } from '../i18n/languages.js';
import type { TemplateOverrides } from '../outbox/template-overrides.js';
import { describeDevice } from './device.js';
import { recordAudit } from '../audit/record.js';
import { hexDigestsEqual, sha256Hex } from '../crypto/digest.js';
import { createOneTimeToken, parseOneTimeToken } from '../crypto/one-time-token.js';
import { badRequest, conflict, notFound, validationError } from '../errors.js';
import type { RateLimits } from '../limits/rate-limits.js';
import { mayNotify } from '../outbox/notices.js';
import { queueEmail } from '../outbox/queue.js';
import { renderEmailChangedEmail, renderEmailChangeEmail, renderEmailChangeRequestedEmail, renderPasswordChangedEmail } from '../outbox/templates.js';
import { assertNotBreached, type BreachCheck } from '../credentials/breach-check.js';
import { assertNotContextPassword, contextWordsFor } from '../credentials/common-passwords.js';
import type { RandomReader } from '../random.js';
import type { RequestContext } from '../request-context.js';
import { reportSessionsRevoked, type ValidSession } from '../session/flow.js';
import type { Stores } from '../stores.js';
import type { User } from '../users/user.js';
import { emitEvent } from '../webhooks/events.js';
import { reauthenticate, type ReauthDeps } from '../credentials/reauthenticate.js';

export const EMAIL_CHANGE_LIFETIME_MS = 24 * 60 * 60 * 1000;

export interface AccountDeps extends ReauthDeps {
  breachCheck: BreachCheck | null;
  limits: RateLimits;
  random: RandomReader;
  baseUrl: string;
  appName: string;
  /** DEFAULT_LANGUAGE: the language of emails to an account that has none. */
  defaultLanguage?: Language;
  /** EMAIL_TEMPLATES_DIR's overrides (config.emailTemplates): each email asks them first. */
  emailTemplates?: TemplateOverrides | null;
  /** Called after a transaction queued an email, so the sender picks it up at once. */
  onEmailQueued: () => void;
}

export interface SessionView {
  id: string;
  current: boolean;
  createdAt: string;
  expiresAt: string;
  lastSeenAt: string;
  ip: string | null;
  userAgent: string | null;
  /** The browser and the operating system named by `userAgent` (null where unknown): for "Chrome on Linux". */
  browser: string | null;
  os: string | null;
}

export async function listSessions(deps: Pick<AccountDeps, 'stores'>, signedIn: ValidSession, now: Date): Promise<SessionView[]> {
  const sessions = await deps.stores.sessions.listUserSessions(signedIn.user.id, now);
  return sessions.map((session) => ({
    id: session.id,
    current: session.id === signedIn.session.id,
    createdAt: session.createdAt.toISOString(),
    expiresAt: session.expiresAt.toISOString(),
    lastSeenAt: session.lastSeenAt.toISOString(),
    ip: session.ip,
    userAgent: session.userAgent,
    ...describeDevice(session.userAgent),
  }));
}

/** Ends one of the user's sessions; 404 for any other id, theirs or nobody's alike (no oracle). True when it was the current one. */
export async function revokeOneSession(deps: Pick<AccountDeps, 'stores'>, signedIn: ValidSession, sessionId: string, ctx: RequestContext): Promise<boolean> {
  const revoked = await deps.stores.transaction(async (tx) => {
    if (!(await tx.sessions.deleteUserSession(signedIn.user.id, sessionId))) return false;
    await reportSessionsRevoked(tx, ctx.now, signedIn.user, [sessionId], 'revoked');
    return true;
  });
  if (!revoked) throw notFound('No such session.');
  const current = sessionId === signedIn.session.id;
  await recordAudit(deps.stores.audit, ctx, 'session_revoked', signedIn.user.id, { sessionId, current });
  return current;
}

export async function revokeOtherSessions(deps: Pick<AccountDeps, 'stores'>, signedIn: ValidSession, ctx: RequestContext): Promise<number> {
  // Signing everyone else out is what a person does who suspects someone else: a pending email
  // change that someone asked from another session ends with it.
  const revoked = await deps.stores.transaction(async (tx) => {
    await tx.emailChangeTokens.deleteUserEmailChangeTokens(signedIn.user.id);
    const ids = await tx.sessions.deleteUserSessionsReturningIds(signedIn.user.id, signedIn.session.id);
    await reportSessionsRevoked(tx, ctx.now, signedIn.user, ids, 'revoked_others');
    return ids.length;
  });
  await recordAudit(deps.stores.audit, ctx, 'session_revoked', signedIn.user.id, { scope: 'others', count: revoked });
  return revoked;
}

export async function changePassword(
  deps: AccountDeps,
  signedIn: ValidSession,
  input: { currentPassword?: string | undefined; newPassword: string },
  ctx: RequestContext,
): Promise<void> {
  const { user } = signedIn;
  if (user.passwordHash === null) {
    throw badRequest('password_not_set', 'This account has no password to change. Set one with "Forgot your password?" on the login page.');
  }
  // The new password's own faults first: a refused one costs no re-authentication attempt.
  assertNotContextPassword(input.newPassword, contextWordsFor(deps.appName, user.email), 'newPassword');
  await reauthenticate(deps, user, signedIn.session, input.currentPassword, ctx);
  await assertNotBreached(deps.breachCheck, input.newPassword, 'newPassword');
  const passwordHash = await deps.hasher.hash(input.newPassword);
  const notify = user.email !== null && (await mayNotify(deps.notices, user.id, 'password_changed', ctx.now));
  await deps.stores.transaction(async (tx) => {
    await tx.users.setPassword(user.id, passwordHash);
    await emitEvent(tx, ctx.now, 'user.password_changed', user, { how: 'change' });
    // Whoever else holds a session of this account (perhaps the reason for the change) is out.
    const revokedIds = await tx.sessions.deleteUserSessionsReturningIds(user.id, signedIn.session.id);
    await reportSessionsRevoked(tx, ctx.now, user, revokedIds, 'password_changed');
    // A pending email change may have been asked by whoever the change locks out.
    await tx.emailChangeTokens.deleteUserEmailChangeTokens(user.id);
    if (notify && user.email !== null) {
      const email = renderPasswordChangedEmail({
        appName: deps.appName,
        baseUrl: deps.baseUrl,
        how: 'change',
        firstPassword: false,
        language: user.language,
        defaultLanguage: deps.defaultLanguage,
        emailTemplates: deps.emailTemplates,
      });
      await queueEmail(tx.outbox, user.email, email, { now: ctx.now, linkExpiresAt: null });
    }
  });
  if (notify) deps.onEmailQueued();
  await recordAudit(deps.stores.audit, ctx, 'password_changed', user.id, { email: user.email });
}

export function emailChangeUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/confirm-email-change?token=${encodeURIComponent(token)}`;
}

export async function requestEmailChange(
  deps: AccountDeps,
  signedIn: ValidSession,
  input: { newEmail: string; currentPassword?: string | undefined },
  ctx: RequestContext,
): Promise<{ token: string; url: string }> {
  const { user } = signedIn;
  // Each request mails a link to an address of the requester's choosing.
  await deps.limits.consume('emailChange', { userId: user.id }, ctx.now);
  await deps.limits.consume('emailChange', { ip: ctx.ip }, ctx.now);
  await reauthenticate(deps, user, signedIn.session, input.currentPassword, ctx);
  if (input.newEmail === user.email) throw validationError([{ path: 'newEmail', message: 'is already the address of this account' }]);
  if ((await deps.stores.users.findUserByEmail(input.newEmail)) !== null) throw conflict('email_exists', 'Another account uses this email address.');

  const { id, secret, token } = createOneTimeToken(deps.random);
  const expiresAt = new Date(ctx.now.getTime() + EMAIL_CHANGE_LIFETIME_MS);
  const url = emailChangeUrl(deps.baseUrl, token);
  const oldEmail = user.email;
  const notifyOld = oldEmail !== null && (await mayNotify(deps.notices, user.id, 'email_change_requested', ctx.now));
  await deps.stores.transaction(async (tx) => {
    await tx.emailChangeTokens.replaceEmailChangeToken({
      id,
      userId: user.id,
      newEmail: input.newEmail,
      secretHash: sha256Hex(secret),
      expiresAt,
      createdAt: ctx.now,
    });
    const link = renderEmailChangeEmail({
      appName: deps.appName,
      url,
      lifetimeHours: EMAIL_CHANGE_LIFETIME_MS / 3_600_000,
      language: user.language,
      defaultLanguage: deps.defaultLanguage,
      emailTemplates: deps.emailTemplates,
    });
    await queueEmail(tx.outbox, input.newEmail, link, { now: ctx.now, linkExpiresAt: expiresAt });
    if (notifyOld && oldEmail !== null) {
      const notice = renderEmailChangeRequestedEmail({
        appName: deps.appName,
        newEmail: input.newEmail,
        baseUrl: deps.baseUrl,
        language: user.language,
        defaultLanguage: deps.defaultLanguage,
        emailTemplates: deps.emailTemplates,
      });
      await queueEmail(tx.outbox, oldEmail, notice, { now: ctx.now, linkExpiresAt: null });
    }
  });
  deps.onEmailQueued();
  await recordAudit(deps.stores.audit, ctx, 'email_change_requested', user.id, { email: oldEmail, newEmail: input.newEmail });
  return { token, url };
}

const INVALID_TOKEN_MESSAGE = 'This link is invalid, expired or already used. Ask for a new one from your account page.';

/** The token is the proof (like verify-email): no session needed. Only this POST spends it. */
/**
 * Moves the account to the new address. Every session but the one presenting the link (when it is
 * the account's own) ends: whoever held a session through the old address holds nothing now.
 * Confirmed from outside the account (no session, or another account's), the link proves the new
 * mailbox but not that its owner set up the account's password, passkeys, second factor or
 * provider links — someone may have moved their own account onto a victim's address: those are
 * marked unproven, and the owner's first sign-in by a proof of the mailbox removes them
 * (users/secure-unverified.ts).
 */
export async function confirmEmailChange(deps: AccountDeps, token: string, ctx: RequestContext, presentedBy: ValidSession | null = null): Promise<void> {
  // A token from an email, like a verification link: the same per-IP limit against guessing.
  await deps.limits.consume('verifyEmail', { ip: ctx.ip }, ctx.now);
  const parts = parseOneTimeToken(token);
  const record = parts ? await deps.stores.emailChangeTokens.findEmailChangeToken(parts.id) : null;
  if (parts === null || record === null || !hexDigestsEqual(sha256Hex(parts.secret), record.secretHash) || record.expiresAt.getTime() <= ctx.now.getTime()) {
    throw badRequest('invalid_token', INVALID_TOKEN_MESSAGE);
  }
  const before = await deps.stores.users.findUserById(record.userId);
  const notifyOld = before !== null && before.email !== null && (await mayNotify(deps.notices, record.userId, 'email_changed', ctx.now));
  let sessionsRevoked = 0;
  let fromSignedInBrowser = false;
  const outcome = await deps.stores.transaction(async (tx) => {
    // Only the request that deletes the row goes on: a token is spent exactly once under races.
    if (!(await tx.emailChangeTokens.deleteEmailChangeToken(record.id))) return 'spent';
    const user = await tx.users.findUserById(record.userId);
    if (user === null) return 'spent';
    // The unique index decides, also against a registration of the address since the request.
    // Thrown, not returned: on PostgreSQL the refused UPDATE has aborted the transaction, which
    // must roll back (the token stays unspent; the answer stays 409 while the address is taken).
    if ((await tx.users.changeEmail(user.id, record.newEmail)) === 'email_taken')
      throw conflict('email_exists', 'Another account uses this email address now.');
    const moved = { id: user.id, email: record.newEmail };
    await emitEvent(tx, ctx.now, 'user.email_changed', moved, { previousEmail: user.email });
    // The new address is verified by the link; an account whose old one never was becomes verified too.
    if (!user.emailVerified) await emitEvent(tx, ctx.now, 'user.email_verified', moved, {});
    const keep = presentedBy !== null && presentedBy.user.id === user.id ? presentedBy.session.id : null;
    const revokedIds = await tx.sessions.deleteUserSessionsReturningIds(user.id, keep);
    // No reason of its own in the catalogue: every other session ends, as "sign out everywhere else" does.
    await reportSessionsRevoked(tx, ctx.now, moved, revokedIds, keep !== null ? 'revoked_others' : 'revoked');
    sessionsRevoked = revokedIds.length;
    fromSignedInBrowser = keep !== null;
    if (!fromSignedInBrowser) await tx.users.markCredentialsUnproven(user.id);
    // Links mailed to the old address die with it: reset and verification tokens, queued emails.
    await tx.resetTokens.deleteUserResetTokens(user.id);
    await tx.verificationTokens.deleteUserVerificationTokens(user.id);
    if (user.email !== null) {
      await tx.outbox.expireQueuedEmailsTo(user.email);
      if (notifyOld)
        await queueEmail(
          tx.outbox,
          user.email,
          renderEmailChangedEmail({
            appName: deps.appName,
            newEmail: record.newEmail,
            baseUrl: deps.baseUrl,
            language: user.language,
            defaultLanguage: deps.defaultLanguage,
            emailTemplates: deps.emailTemplates,
          }),
          {
            now: ctx.now,
            linkExpiresAt: null,
          },
        );
    }
    return user;
  });
  if (outcome === 'spent') throw badRequest('invalid_token', INVALID_TOKEN_MESSAGE);
  if (notifyOld) deps.onEmailQueued();
  await recordAudit(deps.stores.audit, ctx, 'email_changed', outcome.id, {
    email: record.newEmail,
    previousEmail: outcome.email,
    sessionsRevoked,
    fromSignedInBrowser,
  });
}

/**
 * Deletes the account and everything of it in one transaction: sessions, tokens, provider links
 * (foreign keys cascade), the emails still queued to its addresses; the audit rows stay, keyed by
 * the user id, with the address removed from them.
 */
export async function deleteAccount(
  deps: AccountDeps,
  signedIn: ValidSession,
  input: { currentPassword?: string | undefined },
  ctx: RequestContext,
): Promise<void> {
  const { user } = signedIn;
  await reauthenticate(deps, user, signedIn.session, input.currentPassword, ctx);
  await eraseAccount(deps.stores, user, { now: ctx.now, reason: 'deleted_by_owner' });
  await recordAudit(deps.stores.audit, ctx, 'account_deleted', user.id, { reason: 'deleted_by_owner' });
}

/**
 * The deletion itself, shared with the operators' delete (src/admin/): in one transaction, the
 * emails still queued to its addresses expire, the user row goes (sessions, tokens, provider links
 * and second factor cascade), and its audit rows lose the address. False when there was no such user.
 * Reported (`session.revoked` for the sessions that go, then `user.deleted`) in the same
 * transaction, only when the user was there: the events keep no reference to the user row.
 */
export async function eraseAccount(stores: Stores, user: Pick<User, 'id' | 'email'>, report: { now: Date; reason: string }): Promise<boolean> {
  return stores.transaction(async (tx) => {
    const addresses = [...(user.email !== null ? [user.email] : []), ...(await tx.emailChangeTokens.listPendingEmails(user.id))];
    for (const address of addresses) await tx.outbox.expireQueuedEmailsTo(address);
    // Deleted here rather than by the cascade, so the event can name them.
    // First: it may refuse (409 last_owner) before anything is written.
    await releaseOrganizations(tx, user, report.now);
    const revokedIds = await tx.sessions.deleteUserSessionsReturningIds(user.id, null);
    await tx.appAccess.revokeAccount(user.id, report.now);
    const deleted = await tx.users.deleteUser(user.id);
    if (user.email !== null) await tx.audit.forgetEmail(user.id, user.email);
    if (deleted) {
      await reportSessionsRevoked(tx, report.now, user, revokedIds, 'deleted');
      await emitEvent(tx, report.now, 'user.deleted', user, { reason: report.reason });
    }
    return deleted;
  });
}

export interface LinkedSignIns {
  hasPassword: boolean;
  accounts: { provider: string; login: string; linkedAt: string }[];
}

export async function listLinkedSignIns(deps: Pick<AccountDeps, 'stores'>, signedIn: ValidSession): Promise<LinkedSignIns> {
  const accounts = await deps.stores.accounts.listUserAccounts(signedIn.user.id);
  return {
    hasPassword: signedIn.user.passwordHash !== null,
    accounts: accounts.map((account) => ({ provider: account.provider, login: account.providerLogin, linkedAt: account.createdAt.toISOString() })),
  };
}

/** Unlinks a provider, never the last way in: without a password another provider or a passkey must remain. */
export async function unlinkProvider(
  deps: ReauthDeps,
  signedIn: ValidSession,
  input: { provider: string; currentPassword?: string | undefined },
  ctx: RequestContext,
): Promise<void> {
  const { user } = signedIn;
  const { provider } = input;
  // A stolen session must not be able to cut the owner's provider off their account.
  await reauthenticate(deps, user, signedIn.session, input.currentPassword, ctx);
  const unlinked = await deps.stores.transaction(async (tx) => {
    // Two unlinks at once must not each see the other's provider as the one that remains.
    await tx.users.lockUser(user.id);
    const current = await tx.users.findUserById(user.id);
    const accounts = await tx.accounts.listUserAccounts(user.id);
    const account = accounts.find((candidate) => candidate.provider === provider);
    if (current === null || account === undefined) throw notFound('No such linked sign-in.');
    // A passkey is a way in too (passkeys/flow.ts removes the last one on the same terms).
    if (current.passwordHash === null && accounts.length === 1 && (await tx.passkeys.countUserPasskeys(user.id)) === 0) {
      throw conflict('last_sign_in_method', 'This is the only way to sign in to this account. Set a password or link another provider first.');
    }
    await tx.accounts.deleteUserAccount(user.id, provider);
    await emitEvent(tx, ctx.now, 'user.provider_unlinked', user, { provider, providerLogin: account.providerLogin });
    return account;
  });
  await recordAudit(deps.stores.audit, ctx, 'provider_unlinked', user.id, { provider, providerLogin: unlinked.providerLogin });
}
