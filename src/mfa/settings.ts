/** @module Two-factor sign-in's settings: the limit on code checks. */
import { defineSettings } from '../settings.js';

export const mfaSettings = defineSettings({
  name: 'two-factor sign-in',
  rateLimits: {
    // Codes are also counted by the login lock of the email; this bounds what one address tries.
    mfaVerify: {
      name: 'RATE_LIMIT_MFA_VERIFY',
      default: '10/15m',
      meaning: 'second-factor code checks (POST /api/auth/2fa/verify) per client IP; wrong codes also count toward the login lock',
    },
  },
});
