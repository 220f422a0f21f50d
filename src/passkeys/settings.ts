/** @module Passkeys' settings: the limit on passkey sign-in steps. */
import { defineSettings } from '../settings.js';

export const passkeySettings = defineSettings({
  name: 'passkeys',
  rateLimits: {
    // A passkey sign-in is two requests (options, verify), and /login asks for options on each
    // visit for the browser's autofill: room for a shared office address, not for a flood.
    passkeyLogin: {
      name: 'RATE_LIMIT_PASSKEY_LOGIN',
      default: '30/15m',
      meaning:
        'passkey sign-in steps per client IP: each options request and each verification counts (a sign-in is two; /login asks for options once per visit)',
    },
  },
});
