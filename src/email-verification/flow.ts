/**
 * @module Email verification (SPEC §3): a token `<id>.<secret>` lives 24 hours, is stored as a
 * SHA-256 of its secret, and is deleted once used. Creating one deletes the user's earlier ones.
 *
 *   register / resend ──► active (24 h) ──POST verify-email──► deleted; user.emailVerified = true
 *                           │
 *                           └── 24 h pass ──► expired (refused; row replaced on the next resend)
 */
import { releaseOrganizations } from '../organizations/memberships.js';
import type { Language } from '../i18n/languages.js';
import type { TemplateOverrides } from '../outbox/template-overrides.js';
import { recordAudit } from '../audit/record.js';
import { hexDigestsEqual, sha256Hex } from '../crypto/digest.js';
import { createOneTimeToken, parseOneTimeToken } from '../crypto/one-time-token.js';
import { badRequest, notFound } from '../errors.js';
import { queueEmail } from '../outbox/queue.js';
import { renderVerificationEmail } from '../outbox/templates.js';
import type { RateLimits } from '../limits/rate-limits.js';
import type { RandomReader } from '../random.js';
import type { RequestContext } from '../request-context.js';
import type { Stores } from '../stores.js';
import { reportSessionsRevoked, type ValidSession } from '../session/flow.js';
import type { User } from '../users/user.js';
import { emitEvent } from '../webhooks/events.js';
import type { VerificationTokenRecord } from './store.js';

export const VERIFICATION_TOKEN_LIFETIME_MS = 24 * 60 * 60 * 1000;

export interface VerificationDeps {
  stores: Stores;
  random: RandomReader;
  baseUrl: string;
  appName: string;
  /** DEFAULT_LANGUAGE: the language of emails to an account that has none. */
  defaultLanguage?: Language;
  /** EMAIL_TEMPLATES_DIR's overrides (config.emailTemplates): each email asks them first. */
  emailTemplates?: TemplateOverrides | null;
  /** Called after a transaction queued an email, so the sender can pick it up at once. */
  onEmailQueued: () => void;
  limits: RateLimits;
  /** The client that registered the user, from its `user_created` audit row; null once retention removed it. */
  registrationOf: (userId: string) => Promise<{ ip: string | null; userAgent: string | null } | null>;
}

export interface IssuedLink {
  token: string;
  url: string;
}

export function verificationUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/verify-email?token=${encodeURIComponent(token)}`;
}

/** Creates the user's one valid verification token and queues its email, in `stores`' transaction. */
export async function issueVerificationEmail(
  stores: Pick<Stores, 'verificationTokens' | 'outbox'>,
  deps: Pick<VerificationDeps, 'random' | 'baseUrl' | 'appName' | 'defaultLanguage' | 'emailTemplates'>,
  user: { id: string; email: string; language?: Language | null | undefined },
  now: Date,
): Promise<IssuedLink> {
  const { id, secret, token } = createOneTimeToken(deps.random);
  const expiresAt = new Date(now.getTime() + VERIFICATION_TOKEN_LIFETIME_MS);
  await stores.verificationTokens.replaceVerificationToken({ id, userId: user.id, secretHash: sha256Hex(secret), expiresAt, createdAt: now });
  const url = verificationUrl(deps.baseUrl, token);
  await queueEmail(
    stores.outbox,
    user.email,
    renderVerificationEmail({
      appName: deps.appName,
      url,
      lifetimeHours: VERIFICATION_TOKEN_LIFETIME_MS / 3_600_000,
      language: user.language,
      defaultLanguage: deps.defaultLanguage,
      emailTemplates: deps.emailTemplates,
    }),
    { now, linkExpiresAt: expiresAt },
  );
  return { token, url };
}

const INVALID_TOKEN_MESSAGE = 'This verification link is invalid or has expired. Ask for a new one.';

/**
 * The unexpired token row `token` names, after the verify-email limit; 400 invalid_token for
 * anything else. Spending it is the caller's (a delete inside its transaction).
 */
async function liveVerificationToken(deps: VerificationDeps, token: string, ctx: RequestContext): Promise<VerificationTokenRecord> {
  await deps.limits.consume('verifyEmail', { ip: ctx.ip }, ctx.now);
  const parts = parseOneTimeToken(token);
  const record = parts ? await deps.stores.verificationTokens.findVerificationToken(parts.id) : null;
  if (parts === null || record === null || !hexDigestsEqual(sha256Hex(parts.secret), record.secretHash) || record.expiresAt.getTime() <= ctx.now.getTime()) {
    throw badRequest('invalid_token', INVALID_TOKEN_MESSAGE);
  }
  return record;
}

/**
 * Spends the token and marks the address verified. The link proves control of the mailbox, not
 * that whoever registered the address is its owner (account pre-hijacking, users/secure-unverified.ts):
 * every other session of the account ends and its pending email change is dropped. Presented from
 * a browser signed in to the account (`presentedBy`), the one person holds both the password and
 * the mailbox, so the password counts as the owner's; from any other client it stays usable, but
 * the first sign-in by a proof of the mailbox will remove it.
 */
export async function verifyEmail(deps: VerificationDeps, token: string, ctx: RequestContext, presentedBy: ValidSession | null = null): Promise<void> {
  const record = await liveVerificationToken(deps, token, ctx);
  const keepSessionId = presentedBy !== null && presentedBy.user.id === record.userId ? presentedBy.session.id : null;
  const outcome = await deps.stores.transaction(async (tx) => {
    // Only the request that deletes the row wins: a token is spent exactly once under races.
    if (!(await tx.verificationTokens.deleteVerificationToken(record.id))) return null;
    const before = await tx.users.findUserById(record.userId);
    if (before === null) return null;
    await tx.users.markEmailVerified(record.userId, { passwordProven: keepSessionId !== null });
    const revokedIds = await tx.sessions.deleteUserSessionsReturningIds(record.userId, keepSessionId);
    await tx.emailChangeTokens.deleteUserEmailChangeTokens(record.userId);
    // Reported where the flag turns true, not on a link that finds the address verified already.
    if (!before.emailVerified) await emitEvent(tx, ctx.now, 'user.email_verified', before, {});
    // No reason of its own in the catalogue: as "sign out everywhere else" (or everywhere, from outside).
    await reportSessionsRevoked(tx, ctx.now, before, revokedIds, keepSessionId !== null ? 'revoked_others' : 'revoked');
    const user = await tx.users.findUserById(record.userId);
    return user === null ? null : { user, sessionsRevoked: revokedIds.length };
  });
  if (outcome === null) throw badRequest('invalid_token', INVALID_TOKEN_MESSAGE);
  const { user, sessionsRevoked } = outcome;
  await recordAudit(deps.stores.audit, ctx, 'config_updated', user.id, {
    email: user.email,
    reason: 'email_verified',
    fromSignedInBrowser: keepSessionId !== null,
    sessionsRevoked,
  });
}

/** What the verification page shows before anyone confirms: the account the link belongs to, and where it was registered. */
export interface VerificationLinkDescription {
  email: string;
  createdAt: Date;
  /** The client that registered the account (its audit row); null when that row is gone (retention). */
  createdFrom: { ip: string | null; userAgent: string | null } | null;
}

/**
 * Reads a live link without spending it, for the page: its owner sees when and from where the
 * account was created, and can tell a registration of theirs from someone else's. Null for
 * anything but a live token (spending one verifies the address, and a verified address gets no
 * new one, so a live token belongs to an unverified account).
 */
export async function describeVerificationLink(
  deps: Pick<VerificationDeps, 'stores' | 'registrationOf'>,
  token: string,
  now: Date,
): Promise<VerificationLinkDescription | null> {
  const parts = parseOneTimeToken(token);
  const record = parts ? await deps.stores.verificationTokens.findVerificationToken(parts.id) : null;
  if (parts === null || record === null || !hexDigestsEqual(sha256Hex(parts.secret), record.secretHash) || record.expiresAt.getTime() <= now.getTime()) {
    return null;
  }
  const user = await deps.stores.users.findUserById(record.userId);
  if (user === null || user.email === null) return null;
  return { email: user.email, createdAt: user.createdAt, createdFrom: await deps.registrationOf(user.id) };
}

/**
 * "I did not create this account", from the verification link (account pre-hijacking, the
 * victim's-click variant): someone registered this address with a password of their own and is
 * waiting for its owner to confirm it. The link proves control of the mailbox, so its owner may
 * delete the unverified account instead: the account, its sessions (the squatter's), its tokens
 * and its queued emails go; the audit rows stay, without the address. An account whose address is
 * already verified is not deleted this way: its owner signs in and manages it.
 */
export async function declineAccount(deps: VerificationDeps, token: string, ctx: RequestContext): Promise<void> {
  const record = await liveVerificationToken(deps, token, ctx);
  const deleted = await deps.stores.transaction(async (tx) => {
    if (!(await tx.verificationTokens.deleteVerificationToken(record.id))) return null;
    const user = await tx.users.findUserById(record.userId);
    if (user === null || user.emailVerified) return null;
    await releaseOrganizations(tx, user, ctx.now, { handOver: true });
    // Written before the delete; the events reference no user row, so they outlive it.
    const revokedIds = await tx.sessions.deleteUserSessionsReturningIds(user.id, null);
    await reportSessionsRevoked(tx, ctx.now, user, revokedIds, 'deleted');
    await emitEvent(tx, ctx.now, 'user.deleted', user, { reason: 'declined_from_verification_link' });
    await tx.appAccess.revokeAccount(user.id, ctx.now);
    await tx.users.deleteUser(user.id);
    // Nothing more reaches the address on behalf of an account that is gone.
    if (user.email !== null) await tx.outbox.expireQueuedEmailsTo(user.email);
    return user;
  });
  if (deleted === null) throw badRequest('invalid_token', INVALID_TOKEN_MESSAGE);
  await recordAudit(deps.stores.audit, ctx, 'account_deleted', deleted.id, { reason: 'declined_from_verification_link' });
}

export type ResendOutcome = { kind: 'already_verified' } | { kind: 'sent'; link: IssuedLink };

export async function resendVerification(deps: VerificationDeps, user: User, ctx: RequestContext): Promise<ResendOutcome> {
  // Per IP and per user: a signed-in user cannot make the service mail-bomb their own inbox.
  await deps.limits.consume('resendVerification', { ip: ctx.ip }, ctx.now);
  await deps.limits.consume('resendVerification', { userId: user.id }, ctx.now);
  // And per day: three every 15 minutes would still be 288 emails a day to one mailbox.
  await deps.limits.consume('resendVerificationDaily', { userId: user.id }, ctx.now);
  if (user.email === null) throw notFound('This account has no email address to verify.');
  if (user.emailVerified) return { kind: 'already_verified' };
  const email = user.email;
  const link = await deps.stores.transaction((tx) => issueVerificationEmail(tx, deps, { id: user.id, email, language: user.language }, ctx.now));
  deps.onEmailQueued();
  return { kind: 'sent', link };
}
