/** @module PasskeyStore over Kysely. */
import type { Kysely, Selectable } from 'kysely';
import type { PasskeyRecord, PasskeyStore } from '../passkeys/store.js';
import type { Database, PasskeysTable } from './schema.js';

function toRecord(row: Selectable<PasskeysTable>): PasskeyRecord {
  return {
    id: row.id,
    userId: row.user_id,
    credentialId: row.credential_id,
    publicKey: row.public_key,
    counter: Number(row.counter),
    transports: row.transports === '' ? [] : row.transports.split(','),
    name: row.name,
    createdAt: new Date(Number(row.created_at)),
    lastUsedAt: row.last_used_at === null ? null : new Date(Number(row.last_used_at)),
  };
}

export function createPasskeyStore(db: Kysely<Database>): PasskeyStore {
  return {
    async addPasskey(record) {
      const result = await db
        .insertInto('passkeys')
        .values({
          id: record.id,
          user_id: record.userId,
          credential_id: record.credentialId,
          public_key: record.publicKey,
          counter: record.counter,
          transports: record.transports.join(','),
          name: record.name,
          created_at: record.createdAt.getTime(),
          last_used_at: record.lastUsedAt === null ? null : record.lastUsedAt.getTime(),
        })
        .onConflict((oc) => oc.column('credential_id').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1 ? 'added' : 'exists';
    },

    async findPasskeyByCredentialId(credentialId) {
      const row = await db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
      return row === undefined ? null : toRecord(row);
    },

    async listUserPasskeys(userId) {
      const rows = await db.selectFrom('passkeys').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
      return rows.map(toRecord);
    },

    async countUserPasskeys(userId) {
      const row = await db
        .selectFrom('passkeys')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async renamePasskey(userId, id, name) {
      const result = await db.updateTable('passkeys').set({ name }).where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async deletePasskey(userId, id) {
      const result = await db.deleteFrom('passkeys').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },

    async usePasskey(id, previousCounter, newCounter, now) {
      const result = await db
        .updateTable('passkeys')
        .set({ counter: newCounter, last_used_at: now.getTime() })
        .where('id', '=', id)
        .where('counter', '=', previousCounter)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async deleteUserPasskeys(userId) {
      const result = await db.deleteFrom('passkeys').where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
