/** @module The Stores of `src/stores.ts` over one Kysely executor, with real transactions. */
import type { Kysely } from 'kysely';
import type { Stores } from '../stores.js';
import { createAccountStore } from './account-store.js';
import { createAuditStore } from './audit-store.js';
import { createEmailSignInStore } from './email-sign-in-store.js';
import { createRecoveryCodeStore, createTotpStore } from './mfa-store.js';
import { enqueueLogoutNotices } from './oidc-logout-store.js';
import { revokeAppAccess, revokeGrantsWithScope } from './oidc-record-store.js';
import { createOrganizationStore } from './organization-store.js';
import { createOutboxStore } from './outbox-store.js';
import { createPasskeyStore } from './passkey-store.js';
import type { Database } from './schema.js';
import { createSessionStore } from './session-store.js';
import { createEmailChangeTokenStore, createResetTokenStore, createVerificationTokenStore } from './token-stores.js';
import { createUserStore } from './user-store.js';
import { createWebhookEventStore } from './webhook-event-store.js';

export type { Stores };

export function createStores(db: Kysely<Database>, dialect: 'sqlite' | 'postgres'): Stores {
  const bind = (executor: Kysely<Database>, inTransaction: boolean): Stores => {
    const stores: Stores = {
      users: createUserStore(executor, dialect),
      sessions: createSessionStore(executor, { batchLookups: dialect === 'postgres' && !inTransaction }),
      audit: createAuditStore(executor, dialect, { batchWrites: !inTransaction }),
      verificationTokens: createVerificationTokenStore(executor, dialect),
      resetTokens: createResetTokenStore(executor, dialect),
      outbox: createOutboxStore(executor, dialect),
      accounts: createAccountStore(executor),
      emailChangeTokens: createEmailChangeTokenStore(executor, dialect),
      totp: createTotpStore(executor),
      recoveryCodes: createRecoveryCodeStore(executor),
      emailSignIns: createEmailSignInStore(executor),
      passkeys: createPasskeyStore(executor),
      webhookEvents: createWebhookEventStore(executor),
      appAccess: {
        async revokeAccount(accountId, now) {
          await enqueueLogoutNotices(executor, accountId, now);
          return revokeAppAccess(executor, accountId);
        },
        notifyLogout: async (accountId, now) => void (await enqueueLogoutNotices(executor, accountId, now)),
        revokeGrantsWithScope: (accountId, scope) => revokeGrantsWithScope(executor, accountId, scope),
      },
      organizations: createOrganizationStore(executor, dialect),
      transaction: (work) => (inTransaction ? work(stores) : executor.transaction().execute((tx) => work(bind(tx, true)))),
    };
    return stores;
  };
  return bind(db, false);
}
