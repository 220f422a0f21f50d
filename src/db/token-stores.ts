/** @module VerificationTokenStore, ResetTokenStore and EmailChangeTokenStore over Kysely. */
import type { Kysely } from 'kysely';
import type { EmailChangeTokenStore } from '../account/store.js';
import type { VerificationTokenStore } from '../email-verification/store.js';
import type { ConsumedSignInStore } from '../oauth/store.js';
import type { ResetTokenStore } from '../password-reset/store.js';
import type { Database } from './schema.js';

/**
 * "Creating a new token invalidates the user's existing tokens" (SPEC §2) is a delete then an
 * insert. Under PostgreSQL's READ COMMITTED two concurrent creations would each delete only
 * what was committed before them and both insert: two valid tokens. Locking the user's row first
 * (the callers run inside a transaction) puts them one after the other. SQLite has one writer.
 */
export async function lockUserRow(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', userId: string): Promise<void> {
  if (dialect === 'postgres') await db.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
}

export function createVerificationTokenStore(db: Kysely<Database>, dialect: 'sqlite' | 'postgres'): VerificationTokenStore {
  return {
    async replaceVerificationToken(token) {
      await lockUserRow(db, dialect, token.userId);
      await db.deleteFrom('email_verification_tokens').where('user_id', '=', token.userId).execute();
      await db
        .insertInto('email_verification_tokens')
        .values({
          id: token.id,
          user_id: token.userId,
          secret_hash: token.secretHash,
          expires_at: token.expiresAt.getTime(),
          created_at: token.createdAt.getTime(),
        })
        .execute();
    },

    async findVerificationToken(id) {
      const row = await db.selectFrom('email_verification_tokens').selectAll().where('id', '=', id).executeTakeFirst();
      return row
        ? { id: row.id, userId: row.user_id, secretHash: row.secret_hash, expiresAt: new Date(row.expires_at), createdAt: new Date(row.created_at) }
        : null;
    },

    async deleteUserVerificationTokens(userId) {
      await db.deleteFrom('email_verification_tokens').where('user_id', '=', userId).execute();
    },

    async deleteVerificationToken(id) {
      const result = await db.deleteFrom('email_verification_tokens').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },
    async deleteExpiredVerificationTokens(now) {
      const result = await db.deleteFrom('email_verification_tokens').where('expires_at', '<=', now.getTime()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export function createResetTokenStore(db: Kysely<Database>, dialect: 'sqlite' | 'postgres'): ResetTokenStore {
  return {
    async replaceResetToken(token) {
      await lockUserRow(db, dialect, token.userId);
      await db.deleteFrom('password_reset_tokens').where('user_id', '=', token.userId).execute();
      await db
        .insertInto('password_reset_tokens')
        .values({
          id: token.id,
          user_id: token.userId,
          secret_hash: token.secretHash,
          expires_at: token.expiresAt.getTime(),
          created_at: token.createdAt.getTime(),
          used_at: null,
        })
        .execute();
    },

    async findResetToken(id) {
      const row = await db.selectFrom('password_reset_tokens').selectAll().where('id', '=', id).executeTakeFirst();
      return row
        ? {
            id: row.id,
            userId: row.user_id,
            secretHash: row.secret_hash,
            expiresAt: new Date(row.expires_at),
            createdAt: new Date(row.created_at),
            usedAt: row.used_at === null ? null : new Date(row.used_at),
          }
        : null;
    },

    async markResetTokenUsed(id, at) {
      const result = await db
        .updateTable('password_reset_tokens')
        .set({ used_at: at.getTime() })
        .where('id', '=', id)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async deleteUserResetTokens(userId) {
      await db.deleteFrom('password_reset_tokens').where('user_id', '=', userId).execute();
    },
    async deleteSpentResetTokens(now) {
      const result = await db
        .deleteFrom('password_reset_tokens')
        .where((eb) => eb.or([eb('expires_at', '<=', now.getTime()), eb('used_at', 'is not', null)]))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export function createEmailChangeTokenStore(db: Kysely<Database>, dialect: 'sqlite' | 'postgres'): EmailChangeTokenStore {
  return {
    async replaceEmailChangeToken(record) {
      await lockUserRow(db, dialect, record.userId);
      await db.deleteFrom('email_change_tokens').where('user_id', '=', record.userId).execute();
      await db
        .insertInto('email_change_tokens')
        .values({
          id: record.id,
          user_id: record.userId,
          new_email: record.newEmail,
          secret_hash: record.secretHash,
          expires_at: record.expiresAt.getTime(),
          created_at: record.createdAt.getTime(),
        })
        .execute();
    },

    async findEmailChangeToken(id) {
      const row = await db.selectFrom('email_change_tokens').selectAll().where('id', '=', id).executeTakeFirst();
      return row
        ? {
            id: row.id,
            userId: row.user_id,
            newEmail: row.new_email,
            secretHash: row.secret_hash,
            expiresAt: new Date(row.expires_at),
            createdAt: new Date(row.created_at),
          }
        : null;
    },

    async deleteEmailChangeToken(id) {
      const result = await db.deleteFrom('email_change_tokens').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },

    async deleteUserEmailChangeTokens(userId) {
      await db.deleteFrom('email_change_tokens').where('user_id', '=', userId).execute();
    },

    async listPendingEmails(userId) {
      const rows = await db.selectFrom('email_change_tokens').select('new_email').where('user_id', '=', userId).execute();
      return rows.map((row) => row.new_email);
    },

    async deleteExpiredEmailChangeTokens(now) {
      const result = await db.deleteFrom('email_change_tokens').where('expires_at', '<=', now.getTime()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

/** Used provider sign-ins (migration 006): a second use of one is refused before any provider request. */
export function createConsumedSignInStore(db: Kysely<Database>): ConsumedSignInStore {
  return {
    async consumeSignIn(stateHash, expiresAt) {
      const result = await db
        .insertInto('oauth_consumed_sign_ins')
        .values({ state_hash: stateHash, expires_at: expiresAt.getTime() })
        .onConflict((oc) => oc.column('state_hash').doNothing())
        .executeTakeFirst();
      // ON CONFLICT DO NOTHING inserts nothing for a state consumed already: zero rows on both databases.
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
    },
    async deleteExpiredSignIns(now) {
      const result = await db.deleteFrom('oauth_consumed_sign_ins').where('expires_at', '<=', now.getTime()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
