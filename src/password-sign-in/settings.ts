/** @module Password sign-in's settings: the limits on registrations and logins. */
import { defineSettings } from '../settings.js';

/** The spec fixes these two defaults (docs/configuration.md). */
export const passwordSignInSettings = defineSettings({
  name: 'password sign-in',
  rateLimits: {
    register: {
      name: 'RATE_LIMIT_REGISTER',
      default: '5/15m',
      meaning: 'registrations per client IP, as <count>/<window> (window in seconds or with s, m, h; at most 7 days)',
    },
    login: { name: 'RATE_LIMIT_LOGIN', default: '10/15m', meaning: 'login attempts per client IP, as <count>/<window>' },
  },
});
