/**
 * @module The account pre-hijacking defence (DESIGN §5, docs/security.md): when control of an
 * account's never-verified address is proved another way — a provider's verified email, a sign-in
 * link or code — whoever registered the address may not be its owner, so nothing they could have
 * planted survives. One list for every way in that proves an address: a capability that lets an
 * account hold a new way in adds it here.
 */
import type { EmailChangeTokenStore } from '../account/store.js';
import type { RecoveryCodeStore, TotpStore } from '../mfa/store.js';
import type { PasskeyStore } from '../passkeys/store.js';
import type { SessionStore } from '../session/store.js';
import type { User, UserStore } from './user.js';

export interface UnverifiedAccountStores {
  users: Pick<UserStore, 'removePassword' | 'markEmailVerified'>;
  sessions: Pick<SessionStore, 'deleteUserSessions'>;
  totp: Pick<TotpStore, 'deleteTotp'>;
  recoveryCodes: Pick<RecoveryCodeStore, 'deleteRecoveryCodes'>;
  passkeys: Pick<PasskeyStore, 'deleteUserPasskeys'>;
  emailChangeTokens: Pick<EmailChangeTokenStore, 'deleteUserEmailChangeTokens'>;
}

/**
 * Removes the registrant's password, sessions, second factor, passkeys and pending move of the
 * account to an address of theirs, then marks the address verified. Run inside the transaction
 * that proves the address; what it removed is for the caller's audit row.
 */
export async function secureUnverifiedAccount(tx: UnverifiedAccountStores, user: User): Promise<{ passwordRemoved: boolean; sessionsRevoked: number }> {
  await tx.users.removePassword(user.id);
  const sessionsRevoked = await tx.sessions.deleteUserSessions(user.id);
  await tx.totp.deleteTotp(user.id);
  await tx.recoveryCodes.deleteRecoveryCodes(user.id);
  await tx.passkeys.deleteUserPasskeys(user.id);
  await tx.emailChangeTokens.deleteUserEmailChangeTokens(user.id);
  await tx.users.markEmailVerified(user.id);
  return { passwordRemoved: user.passwordHash !== null, sessionsRevoked };
}
