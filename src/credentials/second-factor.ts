/**
 * @module Whether a sign-in owes a second step, which every sign-in method (password, email,
 * provider, passkey, reset) asks before it issues a session. Here rather than in mfa/flow.ts so
 * that no sign-in method imports another capability's flow.
 */

/** What a 2FA login's first step says the second can be. */
export const SECOND_FACTOR_METHODS: readonly string[] = Object.freeze(['totp', 'recovery_code']);

/** True when a sign-in of this user needs a second factor. */
export async function isSecondFactorRequired(
  deps: { stores: { totp: { findTotp(userId: string): Promise<{ enabledAt: Date | null } | null> } } },
  userId: string,
): Promise<boolean> {
  const totp = await deps.stores.totp.findTotp(userId);
  return totp !== null && totp.enabledAt !== null;
}
