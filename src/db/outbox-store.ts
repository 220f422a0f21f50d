/** @module OutboxStore over Kysely. */
import { randomUUID } from 'node:crypto';
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
    html: row.body_html,
    status: row.status as OutboxStatus,
    attempts: row.attempts,
    lastError: row.last_error,
    createdAt: new Date(row.created_at),
    expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
    sentAt: row.sent_at === null ? null : new Date(row.sent_at),
  };
}

export function createOutboxStore(db: Kysely<Database>, dialect: 'sqlite' | 'postgres'): OutboxStore {
  return { ...queueMethods(db), ...dispatchMethods(db, dialect) };
}

/** What the service does with the queue: add an email, drop an address's queued ones, list for the operators. */
function queueMethods(db: Kysely<Database>): Pick<OutboxStore, 'enqueueEmail' | 'expireQueuedEmailsTo' | 'listEmails'> {
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
          body_html: email.html,
          status: 'queued',
          attempts: 0,
          last_error: null,
          next_attempt_at: email.createdAt.getTime(),
          created_at: email.createdAt.getTime(),
          expires_at: email.expiresAt?.getTime() ?? null,
          sent_at: null,
          claim_id: null,
          locked_until: null,
        })
        .execute();
    },

    async expireQueuedEmailsTo(recipient) {
      const result = await db
        .updateTable('email_outbox')
        .set({ status: 'expired', body_text: null, body_html: null })
        .where('status', '=', 'queued')
        .where('recipient', '=', recipient)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async listEmails(limit) {
      const rows = await db.selectFrom('email_outbox').selectAll().orderBy('created_at', 'desc').limit(limit).execute();
      return rows.map(toQueuedEmail);
    },
  };
}

/** What the dispatcher does each round: expire the stale, claim the due, mark each sent or failed. */
function dispatchMethods(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
): Pick<OutboxStore, 'claimDueEmails' | 'markEmailSent' | 'recordEmailFailure' | 'expireStaleEmails'> {
  return {
    async claimDueEmails(now, limit, leaseMs) {
      const claimId = randomUUID();
      const nowMs = now.getTime();
      // One UPDATE … WHERE id IN (SELECT …) statement: atomic on SQLite (a single writer), and on
      // PostgreSQL SKIP LOCKED lets concurrent senders take disjoint rows without waiting.
      await db
        .updateTable('email_outbox')
        .set({ status: 'sending', claim_id: claimId, locked_until: nowMs + leaseMs })
        .where('id', 'in', (eb) => {
          const due = eb
            .selectFrom('email_outbox')
            .select('id')
            .where((w) =>
              w.or([
                w.and([w('status', '=', 'queued'), w('next_attempt_at', '<=', nowMs)]),
                w.and([w('status', '=', 'sending'), w('locked_until', '<=', nowMs)]),
              ]),
            )
            .orderBy('created_at')
            .limit(limit);
          return dialect === 'postgres' ? due.forUpdate().skipLocked() : due;
        })
        .execute();
      const rows = await db.selectFrom('email_outbox').selectAll().where('claim_id', '=', claimId).orderBy('created_at').execute();
      return rows.map(toQueuedEmail);
    },

    async markEmailSent(id, at) {
      await db
        .updateTable('email_outbox')
        .set({ status: 'sent', sent_at: at.getTime(), body_text: null, body_html: null, last_error: null, claim_id: null, locked_until: null })
        .where('id', '=', id)
        .execute();
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
          claim_id: null,
          locked_until: null,
          ...(dead ? { status: 'dead', body_text: null, body_html: null } : { status: 'queued' }),
        })
        .where('id', '=', id)
        .execute();
    },

    async expireStaleEmails(now) {
      const result = await db
        .updateTable('email_outbox')
        .set({ status: 'expired', body_text: null, body_html: null })
        .where('status', '=', 'queued')
        .where('expires_at', '<=', now.getTime())
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}
