/** @module The account's settings: the limit on email change requests. */
import { defineSettings } from '../settings.js';

export const accountSettings = defineSettings({
  name: 'account',
  rateLimits: {
    // Each request mails a link to an address of the requester's choosing.
    emailChange: {
      name: 'RATE_LIMIT_EMAIL_CHANGE',
      default: '5/1h',
      meaning: 'email change requests per user, and separately per client IP (each mails a link)',
    },
  },
});
