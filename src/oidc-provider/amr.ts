/**
 * @module How a Gatehouse session was proven, in the words of ID tokens: `amr` values of RFC 8176
 * and the `acr` a client may demand (`mfa`).
 */

/** Each session method's RFC 8176 value; a method without one (a sign-in provider) adds none. */
const AMR_OF_METHOD: Readonly<Record<string, string>> = {
  password: 'pwd',
  totp: 'otp',
  recovery_code: 'otp',
  email_code: 'otp',
  email_link: 'otp',
  passkey: 'hwk',
  user_verification: 'user',
};

const SECOND_FACTORS = new Set(['totp', 'recovery_code']);

/**
 * `amr` of the session, `mfa` included when two factors were proven (or a user-verified passkey);
 * `acr` is `mfa` then, and absent for one factor.
 */
export function amrOf(methods: readonly string[]): { amr: string[]; acr: string | undefined } {
  const amr = [...new Set(methods.flatMap((method) => (AMR_OF_METHOD[method] === undefined ? [] : [AMR_OF_METHOD[method]])))];
  const multiFactor = methods.some((method) => SECOND_FACTORS.has(method)) || (methods.includes('passkey') && methods.includes('user_verification'));
  if (multiFactor) amr.push('mfa');
  return { amr, acr: multiFactor ? 'mfa' : undefined };
}
