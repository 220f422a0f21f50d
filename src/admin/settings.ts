/** @module The admin API's settings: its key, and how often it may be asked. */
import { defineSettings } from '../settings.js';

export interface AdminSettings {
  /** ADMIN_API_KEY: the bearer key of /api/admin/* (at least 32 characters); null: the admin API is off (404). */
  adminApiKey: string | null;
}

export const adminSettings = defineSettings({
  name: 'admin',
  variables: [
    {
      name: 'ADMIN_API_KEY',
      default: '',
      meaning:
        'turns on the admin API /api/admin/* for this bearer key, at least 32 characters (openssl rand -base64 32); unset: every /api/admin/* answers 404',
    },
  ],
  rateLimits: {
    // Every admin request, counted before the key is compared: a wrong key is refused as cheaply as
    // a right one is served, and guessing is bounded (a 32-character key is out of reach anyway).
    admin: {
      name: 'RATE_LIMIT_ADMIN',
      default: '100/1m',
      meaning: 'admin API requests per client IP, counted before the key is checked (a wrong key counts too)',
    },
  },
  read: (reader): AdminSettings => {
    const adminApiKey = reader.read('ADMIN_API_KEY') ?? null;
    if (adminApiKey !== null && adminApiKey.length < 32) {
      reader.problem('ADMIN_API_KEY: must be at least 32 characters (for example: openssl rand -base64 32), or unset to turn the admin API off');
    }
    return { adminApiKey };
  },
});
