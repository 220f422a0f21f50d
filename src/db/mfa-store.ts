/** @module TotpStore and RecoveryCodeStore over Kysely. */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { RecoveryCodeStore, TotpStore } from '../mfa/store.js';
import type { Database } from './schema.js';

export function createTotpStore(db: Kysely<Database>): TotpStore {
  return {
    async findTotp(userId) {
      const row = await db.selectFrom('user_totp').selectAll().where('user_id', '=', userId).executeTakeFirst();
      if (!row) return null;
      return {
        userId: row.user_id,
        secretEnc: row.secret_enc,
        enabledAt: row.enabled_at === null ? null : new Date(Number(row.enabled_at)),
        lastUsedStep: row.last_used_step === null ? null : Number(row.last_used_step),
        createdAt: new Date(Number(row.created_at)),
      };
    },

    async savePendingTotp(userId, secretEnc, now) {
      // Only a pending row is replaced: an enabled secret changes only by disabling first.
      await db.deleteFrom('user_totp').where('user_id', '=', userId).where('enabled_at', 'is', null).execute();
      const result = await db
        .insertInto('user_totp')
        .values({ user_id: userId, secret_enc: secretEnc, enabled_at: null, last_used_step: null, created_at: now.getTime() })
        .onConflict((oc) => oc.column('user_id').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1 ? 'saved' : 'enabled';
    },

    async enableTotp(userId, secretEnc, step, now) {
      const result = await db
        .updateTable('user_totp')
        .set({ enabled_at: now.getTime(), last_used_step: step })
        .where('user_id', '=', userId)
        .where('secret_enc', '=', secretEnc)
        .where('enabled_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async useTotpStep(userId, step) {
      // One conditional UPDATE: of two requests with the same code, on any instance, one wins.
      const result = await db
        .updateTable('user_totp')
        .set({ last_used_step: step })
        .where('user_id', '=', userId)
        .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async deleteTotp(userId) {
      await db.deleteFrom('user_totp').where('user_id', '=', userId).execute();
    },
  };
}

export function createRecoveryCodeStore(db: Kysely<Database>): RecoveryCodeStore {
  return {
    async replaceRecoveryCodes(userId, codeHashes, now) {
      await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
      if (codeHashes.length === 0) return;
      await db
        .insertInto('recovery_codes')
        .values(codeHashes.map((hash) => ({ id: randomUUID(), user_id: userId, code_hash: hash, used_at: null, created_at: now.getTime() })))
        .execute();
    },

    async useRecoveryCode(userId, codeHash, now) {
      const result = await db
        .updateTable('recovery_codes')
        .set({ used_at: now.getTime() })
        .where('user_id', '=', userId)
        .where('code_hash', '=', codeHash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async countUnusedRecoveryCodes(userId) {
      const row = await db
        .selectFrom('recovery_codes')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('user_id', '=', userId)
        .where('used_at', 'is', null)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async deleteRecoveryCodes(userId) {
      await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
    },
  };
}
