/**
 * @module Every store over one Kysely executor, and transactions across them. A flow that must
 * write several tables atomically (a user with its verification token and queued email) asks
 * for `transaction` and gets the same stores bound to one transaction.
 */
import type { Kysely } from 'kysely';
import type { AuditStore } from '../audit/audit-log.js';
import type { AccountStore } from '../oauth/store.js';
import type { SessionStore } from '../session/store.js';
import type { UserStore } from '../users/user.js';
import { createAccountStore } from './account-store.js';
import { createAuditStore } from './audit-store.js';
import type { Database } from './schema.js';
import { createSessionStore } from './session-store.js';
import { createUserStore } from './user-store.js';

export interface Stores {
  users: UserStore;
  sessions: SessionStore;
  audit: AuditStore;
  accounts: AccountStore;
  /** Runs `work` in one transaction; nested calls join the outer one. */
  transaction<T>(work: (stores: Stores) => Promise<T>): Promise<T>;
}

export function createStores(db: Kysely<Database>): Stores {
  const bind = (executor: Kysely<Database>, inTransaction: boolean): Stores => {
    const stores: Stores = {
      users: createUserStore(executor),
      sessions: createSessionStore(executor),
      audit: createAuditStore(executor),
      accounts: createAccountStore(executor),
      transaction: (work) =>
        inTransaction ? work(stores) : executor.transaction().execute((tx) => work(bind(tx, true))),
    };
    return stores;
  };
  return bind(db, false);
}
