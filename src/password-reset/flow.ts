/**
 * @module Password reset (SPEC §3): a token `<id>.<secret>` lives 1 hour, is stored only as a
 * bcrypt hash (10 rounds) of its secret and is marked used once confirmed. Creating one deletes
 * the user's earlier ones. A completed reset revokes every session of the user.
 *
 *   request ──► active (1 h) ──POST confirm (valid password)──► used; password set; sessions revoked
 *                 │
 *                 └── 1 h passes ──► expired (refused)
 *
 * The request answers the same, in the same time, whether or not the email has an account: an
 * unknown email costs the same bcrypt hash of a throwaway secret and the same audit write.
 */
import type { Language } from '../i18n/languages.js';
import type { TemplateOverrides } from '../outbox/template-overrides.js';
import { recordAudit } from '../audit/record.js';
import { createOneTimeToken, parseOneTimeToken } from '../crypto/one-time-token.js';
import { badRequest } from '../errors.js';
import { assertNotContextPassword, contextWordsFor } from '../credentials/common-passwords.js';
import { assertNotBreached, type BreachCheck } from '../credentials/breach-check.js';
import type { PasswordHasher } from '../credentials/hasher.js';
import { queueEmail } from '../outbox/queue.js';
import { isSecondFactorRequired } from '../credentials/second-factor.js';
import { mayNotify, type NoticeDeps } from '../outbox/notices.js';
import { renderPasswordChangedEmail, renderPasswordResetEmail } from '../outbox/templates.js';
import type { RateLimits } from '../limits/rate-limits.js';
import type { RandomReader } from '../random.js';
import type { RequestContext } from '../request-context.js';
import type { Stores } from '../stores.js';
import { secureForMailboxProof } from '../users/secure-unverified.js';
import { reportSessionsRevoked } from '../session/flow.js';
import { emitEvent } from '../webhooks/events.js';

export const RESET_TOKEN_LIFETIME_MS = 60 * 60 * 1000;
/** SPEC §2 fixes the cost of reset token hashes, independent of BCRYPT_ROUNDS. */
export const RESET_TOKEN_BCRYPT_ROUNDS = 10;

export interface ResetDeps {
  stores: Stores;
  random: RandomReader;
  baseUrl: string;
  appName: string;
  /** DEFAULT_LANGUAGE: the language of emails to an account that has none. */
  defaultLanguage?: Language;
  /** EMAIL_TEMPLATES_DIR's overrides (config.emailTemplates): each email asks them first. */
  emailTemplates?: TemplateOverrides | null;
  hasher: PasswordHasher;
  /** PASSWORD_BREACH_CHECK: null when off. */
  breachCheck: BreachCheck | null;
  /** bcrypt at RESET_TOKEN_BCRYPT_ROUNDS for the tokens' secrets. */
  tokenHasher: PasswordHasher;
  onEmailQueued: () => void;
  /** Clears the email's failed-login count once the password is reset (login lock). */
  clearLoginFailures: (email: string, now: Date) => Promise<void>;
  limits: RateLimits;
  /** The owner is told that the password changed (outbox/notices.ts). */
  notices: NoticeDeps;
}

export function resetUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/reset-password?token=${encodeURIComponent(token)}`;
}

/**
 * Counts a reset request against its limits: per IP, and per email so nobody can flood one
 * inbox from many addresses. Counted for unknown emails too: a 429 reveals nothing about accounts.
 */
export async function limitPasswordResetRequest(deps: Pick<ResetDeps, 'limits'>, email: string, ctx: RequestContext): Promise<void> {
  await deps.limits.consume('passwordResetRequest', { ip: ctx.ip }, ctx.now);
  await deps.limits.consume('passwordResetRequest', { email }, ctx.now);
}

/**
 * Creates the token and queues the email for a known email; the token and link come back for
 * development mode, null for an unknown email. Limits are counted before, by the caller
 * (`limitPasswordResetRequest`), which outside development mode answers the client first and
 * runs this off the response path: the answer then takes the same time for every email.
 */
export async function requestPasswordReset(deps: ResetDeps, email: string, ctx: RequestContext): Promise<{ token: string; url: string } | null> {
  const user = await deps.stores.users.findUserByEmail(email);
  const { id, secret, token } = createOneTimeToken(deps.random);
  const secretHash = await deps.tokenHasher.hash(secret);
  if (user === null || user.email === null) {
    await recordAudit(deps.stores.audit, ctx, 'config_updated', null, { email, reason: 'password_reset_requested', accountFound: false });
    return null;
  }
  const expiresAt = new Date(ctx.now.getTime() + RESET_TOKEN_LIFETIME_MS);
  const url = resetUrl(deps.baseUrl, token);
  const recipient = user.email;
  await deps.stores.transaction(async (tx) => {
    await tx.resetTokens.replaceResetToken({ id, userId: user.id, secretHash, expiresAt, createdAt: ctx.now });
    await queueEmail(
      tx.outbox,
      recipient,
      renderPasswordResetEmail({
        appName: deps.appName,
        url,
        lifetimeHours: RESET_TOKEN_LIFETIME_MS / 3_600_000,
        language: user.language,
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
  await recordAudit(deps.stores.audit, ctx, 'config_updated', user.id, { email: recipient, reason: 'password_reset_requested', accountFound: true });
  return { token, url };
}

const INVALID_TOKEN_MESSAGE = 'This reset link is invalid, expired or already used. Ask for a new one.';

export async function confirmPasswordReset(deps: ResetDeps, input: { token: string; password: string }, ctx: RequestContext): Promise<void> {
  await deps.limits.consume('passwordResetConfirm', { ip: ctx.ip }, ctx.now);
  const parts = parseOneTimeToken(input.token);
  const record = parts ? await deps.stores.resetTokens.findResetToken(parts.id) : null;
  // An unknown token id costs one compare (against a dummy hash) like a known one.
  const secretMatches = await deps.tokenHasher.verify(parts?.secret ?? '', record?.secretHash ?? null);
  if (record === null || !secretMatches || record.usedAt !== null || record.expiresAt.getTime() <= ctx.now.getTime()) {
    throw badRequest('invalid_token', INVALID_TOKEN_MESSAGE);
  }
  // Refused before the token is spent: the person can choose another with the same link.
  const owner = await deps.stores.users.findUserById(record.userId);
  assertNotContextPassword(input.password, contextWordsFor(deps.appName, owner?.email ?? null));
  await assertNotBreached(deps.breachCheck, input.password);
  const passwordHash = await deps.hasher.hash(input.password);
  const notice =
    owner?.email && (await mayNotify(deps.notices, owner.id, 'password_changed', ctx.now))
      ? {
          to: owner.email,
          email: renderPasswordChangedEmail({
            appName: deps.appName,
            baseUrl: deps.baseUrl,
            how: 'reset',
            firstPassword: owner.passwordHash === null,
            language: owner.language,
            defaultLanguage: deps.defaultLanguage,
            emailTemplates: deps.emailTemplates,
          }),
        }
      : null;
  const outcome = await deps.stores.transaction(async (tx) => {
    // Only the request that marks the token used wins: two confirms, exactly one succeeds.
    if (!(await tx.resetTokens.markResetTokenUsed(record.id, ctx.now))) return null;
    const current = await tx.users.findUserById(record.userId);
    if (current === null) return null;
    // Following the link proved control of the mailbox: what someone who registered the address
    // before its owner may have set up (passkeys, a second factor) ends with their password.
    const secured = await secureForMailboxProof(tx, current, { now: ctx.now, sessionsRevokedReason: 'password_reset' });
    await tx.users.setPassword(record.userId, passwordHash);
    await tx.users.markEmailVerified(record.userId);
    await emitEvent(tx, ctx.now, 'user.password_changed', current, { how: 'reset' });
    // Securing reports the address it verifies; otherwise it is reported here, where it turns true.
    if (!current.emailVerified && secured === null) await emitEvent(tx, ctx.now, 'user.email_verified', current, {});
    await reportSessionsRevoked(tx, ctx.now, current, await tx.sessions.deleteUserSessionsReturningIds(record.userId, null), 'password_reset');
    // Whoever had the password may have signed apps in with it: their grants and tokens end too.
    await tx.appAccess.revokeAccount(record.userId, ctx.now);
    // A pending email change may be the attacker's (asked from a stolen session): the reset that
    // secures the account ends it too, or its link would move the account away afterwards.
    await tx.emailChangeTokens.deleteUserEmailChangeTokens(record.userId);
    if (notice !== null) await queueEmail(tx.outbox, notice.to, notice.email, { now: ctx.now, linkExpiresAt: null });
    const updated = await tx.users.findUserById(record.userId);
    return updated === null ? null : { updated, secured, wasVerified: current.emailVerified };
  });
  if (outcome === null) throw badRequest('invalid_token', INVALID_TOKEN_MESSAGE);
  const { updated: user, secured } = outcome;
  if (secured !== null) {
    await recordAudit(deps.stores.audit, ctx, 'config_updated', user.id, {
      action: 'unverified_account_secured_for_password_reset',
      email: user.email,
      passwordUnproven: outcome.wasVerified,
      ...secured,
    });
  }
  if (notice !== null) deps.onEmailQueued();
  // Not for a 2FA account: its failures include wrong codes, which a reset (control of the
  // mailbox) must not wipe (DESIGN §9.3: only a right code clears them).
  if (user.email !== null && !(await isSecondFactorRequired(deps, user.id))) await deps.clearLoginFailures(user.email, ctx.now);
  await recordAudit(deps.stores.audit, ctx, 'password_reset_completed', user.id, { email: user.email, firstPassword: owner?.passwordHash === null });
}
