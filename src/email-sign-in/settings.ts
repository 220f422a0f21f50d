/** @module Email sign-in's settings: whether it may create accounts, and its limits. */
import { defineSettings } from '../settings.js';

export interface EmailSignInSettings {
  /** EMAIL_SIGN_IN_SIGNUP: an unknown address may create its account by signing in by email. */
  emailSignInSignup: boolean;
}

export const emailSignInSettings = defineSettings({
  name: 'email sign-in',
  variables: [
    {
      name: 'EMAIL_SIGN_IN_SIGNUP',
      default: 'false',
      meaning: 'true: an email sign-in request for an unknown address mails it too, and its first use creates the account (no password)',
    },
  ],
  rateLimits: {
    // Each request mails a link and a code; per IP and per address, like the reset request.
    emailSignIn: {
      name: 'RATE_LIMIT_EMAIL_SIGN_IN',
      default: '5/15m',
      meaning: 'sign-in link and code requests per client IP, and separately per email (each mails a link and a code)',
    },
    // The login lock ends after its duration; a day's cap on wrong codes bounds what a patient
    // guesser tries against one address (NIST SP 800-63B bounds consecutive failures).
    emailSignInCodeDaily: {
      name: 'RATE_LIMIT_EMAIL_SIGN_IN_CODE_DAILY',
      default: '50/24h',
      meaning: "wrong email sign-in codes per address per day; past it that address's codes are refused until the window ends (its links still work)",
    },
  },
  read: (reader): EmailSignInSettings => ({ emailSignInSignup: reader.boolean('EMAIL_SIGN_IN_SIGNUP', false) }),
});
