/** @module User transfer's settings: the limit on a person's own data export. */
import { defineSettings } from '../settings.js';

export const userTransferSettings = defineSettings({
  name: 'userTransfer',
  rateLimits: {
    // Each export reads every session, link and audit event of the account.
    accountExport: {
      name: 'RATE_LIMIT_ACCOUNT_EXPORT',
      default: '5/1h',
      meaning: "downloads of a person's own data (GET /api/auth/account/export) per user",
    },
  },
});
