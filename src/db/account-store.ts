/** @module AccountStore over Kysely. */
import type { Kysely, Selectable } from 'kysely';
import type { AccountStore, LinkedAccount } from '../oauth/store.js';
import type { AccountsTable, Database } from './schema.js';

function toAccount(row: Selectable<AccountsTable>): LinkedAccount {
  return {
    id: row.id,
    userId: row.user_id,
    provider: row.provider,
    providerAccountId: row.provider_account_id,
    providerLogin: row.provider_login,
    accessTokenEnc: row.access_token_enc,
    refreshTokenEnc: row.refresh_token_enc,
    accessTokenExpiresAt: row.access_token_expires_at === null ? null : new Date(row.access_token_expires_at),
    scope: row.scope,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** The columns a link and a link waiting for its code step (oauth_pending_links) share. */
function linkColumns(account: LinkedAccount) {
  return {
    user_id: account.userId,
    provider: account.provider,
    provider_account_id: account.providerAccountId,
    provider_login: account.providerLogin,
    access_token_enc: account.accessTokenEnc,
    refresh_token_enc: account.refreshTokenEnc,
    access_token_expires_at: account.accessTokenExpiresAt?.getTime() ?? null,
    scope: account.scope,
    created_at: account.createdAt.getTime(),
  };
}

export function createAccountStore(db: Kysely<Database>): AccountStore {
  return { ...linkedAccountMethods(db), ...pendingLinkMethods(db) };
}

type LinkedAccountMethods = Pick<
  AccountStore,
  'findAccount' | 'createAccount' | 'updateAccountTokens' | 'listUserAccounts' | 'deleteUserAccount' | 'deleteUserAccounts'
>;
type PendingLinkMethods = Pick<AccountStore, 'holdPendingLink' | 'takePendingLink' | 'deleteExpiredPendingLinks'>;

/** Table `accounts`: the provider accounts linked to a user. */
function linkedAccountMethods(db: Kysely<Database>): LinkedAccountMethods {
  return {
    async findAccount(provider, providerAccountId) {
      const row = await db
        .selectFrom('accounts')
        .selectAll()
        .where('provider', '=', provider)
        .where('provider_account_id', '=', providerAccountId)
        .executeTakeFirst();
      return row ? toAccount(row) : null;
    },

    async createAccount(account) {
      // ON CONFLICT DO NOTHING rather than catching the violation: on PostgreSQL a failed
      // statement aborts the surrounding transaction, and the caller still has work to do.
      const result = await db
        .insertInto('accounts')
        .values({ id: account.id, ...linkColumns(account), updated_at: account.updatedAt.getTime() })
        .onConflict((oc) => oc.columns(['provider', 'provider_account_id']).doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1 ? 'created' : 'already_linked';
    },

    async updateAccountTokens(accountId, update) {
      await db
        .updateTable('accounts')
        .set({
          provider_login: update.providerLogin,
          access_token_enc: update.accessTokenEnc,
          refresh_token_enc: update.refreshTokenEnc,
          access_token_expires_at: update.accessTokenExpiresAt?.getTime() ?? null,
          scope: update.scope,
          updated_at: update.updatedAt.getTime(),
        })
        .where('id', '=', accountId)
        .execute();
    },

    async listUserAccounts(userId) {
      const rows = await db.selectFrom('accounts').selectAll().where('user_id', '=', userId).orderBy('created_at').execute();
      return rows.map(toAccount);
    },

    async deleteUserAccount(userId, provider) {
      const result = await db.deleteFrom('accounts').where('user_id', '=', userId).where('provider', '=', provider).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async deleteUserAccounts(userId) {
      const result = await db.deleteFrom('accounts').where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

/**
 * Table `oauth_pending_links`: a link into a two-factor account waits there, sealed tokens and
 * all, until the code step takes it or it expires.
 */
function pendingLinkMethods(db: Kysely<Database>): PendingLinkMethods {
  return {
    async holdPendingLink({ challengeId, account, expiresAt }) {
      await db
        .insertInto('oauth_pending_links')
        .values({ challenge_id: challengeId, account_id: account.id, ...linkColumns(account), expires_at: expiresAt.getTime() })
        .execute();
    },

    async takePendingLink(challengeId, now) {
      // DELETE … RETURNING (SQLite 3.35+, PostgreSQL): the row goes to exactly one caller.
      const row = await db.deleteFrom('oauth_pending_links').where('challenge_id', '=', challengeId).returningAll().executeTakeFirst();
      if (row === undefined || row.expires_at <= now.getTime()) return null;
      return toAccount({ ...row, id: row.account_id, updated_at: row.created_at });
    },

    async deleteExpiredPendingLinks(now) {
      const result = await db.deleteFrom('oauth_pending_links').where('expires_at', '<=', now.getTime()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
