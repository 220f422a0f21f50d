/**
 * @module The account pre-hijacking defence (docs/security.md). Someone may register an address
 * that is not theirs, choose its password, and wait for the owner. Two moments decide:
 *
 * - The first proof of the mailbox (verify-email, a reset, an email sign-in, a provider's
 *   verified address) ends every session of a never-verified account and drops its pending email
 *   change (`endUnprovedAccess`).
 * - The first sign-in by a proof of the mailbox (email link or code, a provider with the verified
 *   address, a reset) of an account whose credentials were set up before the address was proved —
 *   a password chosen by whoever registered it and not confirmed since from a browser signed in to
 *   it, or an account moved to the address by a link confirmed from outside it
 *   (account/flow.ts `confirmEmailChange`) — removes the password with everything set up through
 *   it (`secureForMailboxProof`): passkeys, second factor, recovery codes, provider links, pending
 *   email change, sessions. Until then the spec's flow (register, verify from any client, sign in
 *   with the password) keeps working.
 *
 * One list for every way in: a capability that lets an account hold a new way in adds it here.
 */
import type { AppAccessStore } from '../oidc-provider/store.js';
import type { EmailChangeTokenStore } from '../account/store.js';
import type { RecoveryCodeStore, TotpStore } from '../mfa/store.js';
import type { AccountStore } from '../oauth/store.js';
import type { PasskeyStore } from '../passkeys/store.js';
import { reportSessionsRevoked } from '../session/flow.js';
import type { SessionStore } from '../session/store.js';
import { emitEvent, type SessionRevokedReason, type WebhookEventStore } from '../webhooks/events.js';
import type { User, UserStore } from './user.js';

export interface UnverifiedAccountStores {
  users: Pick<UserStore, 'removePassword' | 'markEmailVerified'>;
  sessions: Pick<SessionStore, 'deleteUserSessionsReturningIds'>;
  totp: Pick<TotpStore, 'findTotp' | 'deleteTotp'>;
  recoveryCodes: Pick<RecoveryCodeStore, 'deleteRecoveryCodes'>;
  passkeys: Pick<PasskeyStore, 'listUserPasskeys' | 'deleteUserPasskeys'>;
  accounts: Pick<AccountStore, 'listUserAccounts' | 'deleteUserAccounts'>;
  emailChangeTokens: Pick<EmailChangeTokenStore, 'deleteUserEmailChangeTokens'>;
  webhookEvents: WebhookEventStore;
  appAccess: Pick<AppAccessStore, 'notifyLogout' | 'revokeAccount'>;
}

/** How the securing is reported (webhooks/events.ts): when, and the sign-in's reason for the sessions it ends. */
export interface SecuringReport {
  now: Date;
  sessionsRevokedReason: SessionRevokedReason;
}

/** What a proof of the mailbox removed, for the caller's audit row and the person's notice. */
export interface SecuredAccount {
  passwordRemoved: boolean;
  sessionsRevoked: number;
  /** Provider accounts unlinked: a provider linked by whoever set the account up is a way in too. */
  accountsUnlinked: number;
}

/**
 * True when a sign-in by a proof of the mailbox must first remove what someone else may have
 * planted: the address was never verified, or the credentials predate its proof (with or without
 * a password: a moved account may hold only passkeys or provider links).
 */
const needsSecuring = (user: Pick<User, 'emailVerified' | 'passwordUnproven'>): boolean => !user.emailVerified || user.passwordUnproven;

/**
 * Removes the password, sessions, second factor, passkeys, provider links and pending move of the
 * account to another address, then marks the address verified and the credentials proven (there
 * are none left). Run inside the transaction that proves the address, before the new session is
 * issued and before a provider sign-in makes its own link.
 */
async function secureUnverifiedAccount(tx: UnverifiedAccountStores, user: User, report: SecuringReport): Promise<SecuredAccount> {
  // Read first, so that each way in removed is reported as its own owner's change would be.
  const totp = await tx.totp.findTotp(user.id);
  const passkeys = await tx.passkeys.listUserPasskeys(user.id);
  const accounts = await tx.accounts.listUserAccounts(user.id);
  await tx.users.removePassword(user.id);
  const revokedIds = await tx.sessions.deleteUserSessionsReturningIds(user.id, null);
  const sessionsRevoked = revokedIds.length;
  await tx.totp.deleteTotp(user.id);
  await tx.recoveryCodes.deleteRecoveryCodes(user.id);
  await tx.passkeys.deleteUserPasskeys(user.id);
  const accountsUnlinked = await tx.accounts.deleteUserAccounts(user.id);
  await tx.emailChangeTokens.deleteUserEmailChangeTokens(user.id);
  await tx.users.markEmailVerified(user.id);
  if (!user.emailVerified) await emitEvent(tx, report.now, 'user.email_verified', user, {});
  await reportSessionsRevoked(tx, report.now, user, revokedIds, report.sessionsRevokedReason);
  // Apps signed in to through Gatehouse by whoever set the account up go with the rest.
  await tx.appAccess.revokeAccount(user.id, report.now);
  if (totp !== null && totp.enabledAt !== null) await emitEvent(tx, report.now, 'user.mfa_disabled', user, { method: 'totp' });
  for (const passkey of passkeys) await emitEvent(tx, report.now, 'user.passkey_removed', user, { passkeyId: passkey.id, name: passkey.name });
  for (const account of accounts) {
    await emitEvent(tx, report.now, 'user.provider_unlinked', user, { provider: account.provider, providerLogin: account.providerLogin });
  }
  return { passwordRemoved: user.passwordHash !== null, sessionsRevoked, accountsUnlinked };
}

/**
 * The sign-in by a proof of the mailbox: secures the account when `needsSecuring` says so (null
 * otherwise, and nothing changes). Run inside the sign-in's transaction.
 */
export async function secureForMailboxProof(tx: UnverifiedAccountStores, user: User, report: SecuringReport): Promise<SecuredAccount | null> {
  return needsSecuring(user) ? secureUnverifiedAccount(tx, user, report) : null;
}
