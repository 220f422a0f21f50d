/** @module Email verification's settings: the limits on verifications and on resent emails. */
import { defineSettings } from '../settings.js';

export const emailVerificationSettings = defineSettings({
  name: 'email verification',
  rateLimits: {
    verifyEmail: { name: 'RATE_LIMIT_VERIFY_EMAIL', default: '10/15m', meaning: 'email verifications per client IP' },
    resendVerification: {
      name: 'RATE_LIMIT_RESEND_VERIFICATION',
      default: '3/15m',
      meaning: 'verification email resends per client IP, and separately per user',
    },
    // A signed-in user could otherwise have 3 emails sent to their address every 15 minutes, all day.
    resendVerificationDaily: {
      name: 'RATE_LIMIT_RESEND_VERIFICATION_DAILY',
      default: '10/24h',
      meaning: 'verification email resends per user per day, so no mailbox can be flooded',
    },
  },
});
