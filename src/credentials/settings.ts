/** @module Password credentials' settings: the bcrypt cost, the breach check, and the limit on re-authentication. */
import { defineSettings } from '../settings.js';

/** Have I Been Pwned's k-anonymity range API (credentials/breach-check.ts). */
const HIBP_RANGE_URL = 'https://api.pwnedpasswords.com/range/';

export type BreachCheckSetting = { kind: 'off' } | { kind: 'hibp'; rangeUrl: string };

export interface CredentialSettings {
  bcryptRounds: number;
  /** PASSWORD_BREACH_CHECK: off, or Have I Been Pwned's range API at `rangeUrl` (credentials/breach-check.ts). */
  passwordBreachCheck: Readonly<BreachCheckSetting>;
}

export const credentialSettings = defineSettings({
  name: 'credentials',
  variables: [
    { name: 'BCRYPT_ROUNDS', default: '10', meaning: 'bcrypt cost (4 to 15; at least 10 in production)' },
    {
      name: 'PASSWORD_BREACH_CHECK',
      default: 'off',
      meaning: "hibp: also refuse new passwords found in Have I Been Pwned's breach corpus (only 5 hex characters of a SHA-1 leave the server; fails open)",
    },
    { name: 'PASSWORD_BREACH_CHECK_URL', default: HIBP_RANGE_URL, meaning: 'the k-anonymity range API that PASSWORD_BREACH_CHECK=hibp asks' },
  ],
  rateLimits: {
    // Each check of a current password is a bcrypt verification on the login hash pool: a signed-in
    // person, right password or wrong, must not be able to keep that pool busy for everyone.
    reauthenticate: {
      name: 'RATE_LIMIT_REAUTHENTICATE',
      default: '10/15m',
      meaning:
        'checks of a current password (password and email change, 2FA and passkey changes, unlinking, account deletion) per user, and separately per client IP; right passwords count too',
    },
  },
  read: (reader, { mode }): CredentialSettings => {
    const bcryptRounds = reader.integer('BCRYPT_ROUNDS', 10, 4, 15);
    if (mode === 'production' && bcryptRounds < 10) {
      // Low costs are for tests and development: a stolen hash at cost 4 is guessed 64 times faster.
      reader.problem(`BCRYPT_ROUNDS: production needs a cost of at least 10 (4 to 9 are for tests and development), got "${bcryptRounds}"`);
    }

    const rawBreachCheck = reader.read('PASSWORD_BREACH_CHECK') ?? 'off';
    if (rawBreachCheck !== 'off' && rawBreachCheck !== 'hibp') reader.problem(`PASSWORD_BREACH_CHECK: expected off or hibp, got "${rawBreachCheck}"`);
    const breachRangeUrl = reader.read('PASSWORD_BREACH_CHECK_URL') ?? HIBP_RANGE_URL;
    if (!/^https?:\/\/[^\s?#]+\/$/.test(breachRangeUrl) || (mode === 'production' && !breachRangeUrl.startsWith('https://'))) {
      reader.problem('PASSWORD_BREACH_CHECK_URL: expected an https:// address ending in "/" (plain http only outside production)');
    }
    const passwordBreachCheck: BreachCheckSetting = rawBreachCheck === 'hibp' ? { kind: 'hibp', rangeUrl: breachRangeUrl } : { kind: 'off' };
    return { bcryptRounds, passwordBreachCheck: Object.freeze(passwordBreachCheck) };
  },
});
