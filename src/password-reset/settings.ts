/** @module Password reset's settings: the limits on requests and confirmations. */
import { defineSettings } from '../settings.js';

export const passwordResetSettings = defineSettings({
  name: 'password reset',
  rateLimits: {
    passwordResetRequest: {
      name: 'RATE_LIMIT_PASSWORD_RESET_REQUEST',
      default: '5/15m',
      meaning: 'password reset requests per client IP, and separately per email',
    },
    passwordResetConfirm: { name: 'RATE_LIMIT_PASSWORD_RESET_CONFIRM', default: '10/15m', meaning: 'password reset confirmations per client IP' },
  },
});
