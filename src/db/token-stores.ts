/** @module VerificationTokenStore and ResetTokenStore over Kysely. */
import type { Kysely } from 'kysely';
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
async function lockUserRow(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', userId: string): Promise<void> {
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
    async deleteSpentResetTokens(now) {
      const result = await db
        .deleteFrom('password_reset_tokens')
        .where((eb) => eb.or([eb('expires_at', '<=', now.getTime()), eb('used_at', 'is not', null)]))
        .executeTakeFirst();
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
