/** @module EmailSignInStore over Kysely (migration 009). */
import type { Kysely, Selectable } from 'kysely';
import type { EmailSignInRecord, EmailSignInStore } from '../email-sign-in/store.js';
import type { Database, EmailSignInTokensTable } from './schema.js';

/** The outbox template of the sign-in email (outbox/templates.ts). */
const SIGN_IN_TEMPLATE = 'email_sign_in';

function toRecord(row: Selectable<EmailSignInTokensTable>): EmailSignInRecord {
  return {
    id: row.id,
    email: row.email,
    userId: row.user_id,
    secretHash: row.secret_hash,
    codeMac: row.code_mac,
    codeAttempts: Number(row.code_attempts),
    returnTo: row.return_to,
    expiresAt: new Date(Number(row.expires_at)),
    createdAt: new Date(Number(row.created_at)),
  };
}

export function createEmailSignInStore(db: Kysely<Database>): EmailSignInStore {
  // A spent or replaced sign-in's link must not wait in the outbox for a sender (DESIGN §9.9).
  const purgeQueuedSignInEmails = async (recipient: string): Promise<void> => {
    await db
      .updateTable('email_outbox')
      .set({ status: 'expired', body_text: null, body_html: null })
      .where('status', '=', 'queued')
      .where('template', '=', SIGN_IN_TEMPLATE)
      .where('recipient', '=', recipient)
      .execute();
  };
  return {
    async replaceEmailSignIn(record) {
      await purgeQueuedSignInEmails(record.email);
      const values = {
        id: record.id,
        email: record.email,
        user_id: record.userId,
        secret_hash: record.secretHash,
        code_mac: record.codeMac,
        code_attempts: 0,
        return_to: record.returnTo,
        expires_at: record.expiresAt.getTime(),
        created_at: record.createdAt.getTime(),
      };
      // One statement on the unique address: two concurrent requests leave exactly one row, on
      // both databases, without locking a user row (an unknown address has none).
      await db
        .insertInto('email_sign_in_tokens')
        .values(values)
        .onConflict((oc) =>
          oc.column('email').doUpdateSet({
            id: values.id,
            user_id: values.user_id,
            secret_hash: values.secret_hash,
            code_mac: values.code_mac,
            code_attempts: 0,
            return_to: values.return_to,
            expires_at: values.expires_at,
            created_at: values.created_at,
          }),
        )
        .execute();
    },

    async findEmailSignInById(id) {
      const row = await db.selectFrom('email_sign_in_tokens').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async findEmailSignInByEmail(email) {
      const row = await db.selectFrom('email_sign_in_tokens').selectAll().where('email', '=', email).executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async countWrongCode(id, maxAttempts) {
      const result = await db
        .updateTable('email_sign_in_tokens')
        .set((eb) => ({ code_attempts: eb('code_attempts', '+', 1) }))
        .where('id', '=', id)
        .where('code_attempts', '<', maxAttempts)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async spendEmailSignIn(id, options) {
      let query = db.deleteFrom('email_sign_in_tokens').where('id', '=', id);
      if (options.maxCodeAttempts !== null) query = query.where('code_attempts', '<', options.maxCodeAttempts);
      const row = await query.returning('email').executeTakeFirst();
      if (row === undefined) return false;
      await purgeQueuedSignInEmails(row.email);
      return true;
    },

    async deleteExpiredEmailSignIns(now) {
      const result = await db.deleteFrom('email_sign_in_tokens').where('expires_at', '<=', now.getTime()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
