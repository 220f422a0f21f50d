/** @module OutboxStore over Kysely. */
import type { Kysely, Selectable } from 'kysely';
import type { EmailTemplate, OutboxStatus, OutboxStore, QueuedEmail } from '../outbox/outbox.js';
import type { Database, EmailOutboxTable } from './schema.js';

const MAX_ERROR_LENGTH = 500;

function toQueuedEmail(row: Selectable<EmailOutboxTable>): QueuedEmail {
  return {
    id: row.id,
    recipient: row.recipient,
    template: row.template as EmailTemplate,
    subject: row.subject,
    text: row.body_text,
    status: row.status as OutboxStatus,
    attempts: row.attempts,
    lastError: row.last_error,
    createdAt: new Date(row.created_at),
    expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
    sentAt: row.sent_at === null ? null : new Date(row.sent_at),
  };
}

export function createOutboxStore(db: Kysely<Database>): OutboxStore {
  return {
    async enqueueEmail(email) {
      await db
        .insertInto('email_outbox')
        .values({
          id: email.id,
          recipient: email.recipient,
          template: email.template,
          subject: email.subject,
          body_text: email.text,
          status: 'queued',
          attempts: 0,
          last_error: null,
          next_attempt_at: email.createdAt.getTime(),
          created_at: email.createdAt.getTime(),
          expires_at: email.expiresAt?.getTime() ?? null,
          sent_at: null,
        })
        .execute();
    },

    async listDueEmails(now, limit) {
      const rows = await db
        .selectFrom('email_outbox')
        .selectAll()
        .where('status', '=', 'queued')
        .where('next_attempt_at', '<=', now.getTime())
        .orderBy('created_at')
        .limit(limit)
        .execute();
      return rows.map(toQueuedEmail);
    },

    async markEmailSent(id, at) {
      await db.updateTable('email_outbox').set({ status: 'sent', sent_at: at.getTime(), body_text: null, last_error: null }).where('id', '=', id).execute();
    },

    async recordEmailFailure(id, error, nextAttemptAt, maxAttempts) {
      const row = await db.selectFrom('email_outbox').select('attempts').where('id', '=', id).executeTakeFirst();
      if (!row) return;
      const attempts = row.attempts + 1;
      const dead = attempts >= maxAttempts;
      await db
        .updateTable('email_outbox')
        .set({
          attempts,
          last_error: error.slice(0, MAX_ERROR_LENGTH),
          next_attempt_at: nextAttemptAt.getTime(),
          ...(dead ? { status: 'dead', body_text: null } : {}),
        })
        .where('id', '=', id)
        .execute();
    },

    async expireStaleEmails(now) {
      const result = await db
        .updateTable('email_outbox')
        .set({ status: 'expired', body_text: null })
        .where('status', '=', 'queued')
        .where('expires_at', '<=', now.getTime())
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async listEmails(limit) {
      const rows = await db.selectFrom('email_outbox').selectAll().orderBy('created_at', 'desc').limit(limit).execute();
      return rows.map(toQueuedEmail);
    },
  };
}
