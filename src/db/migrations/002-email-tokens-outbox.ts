/** @module Email verification tokens, password reset tokens and the email outbox. */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('email_verification_tokens')
    .addColumn('id', 'varchar(22)', (col) => col.primaryKey())
    .addColumn('user_id', 'varchar(36)', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('secret_hash', 'varchar(64)', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('email_verification_tokens_user_id_idx').on('email_verification_tokens').column('user_id').execute();

  await db.schema
    .createTable('password_reset_tokens')
    .addColumn('id', 'varchar(22)', (col) => col.primaryKey())
    .addColumn('user_id', 'varchar(36)', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('secret_hash', 'varchar(100)', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('password_reset_tokens_user_id_idx').on('password_reset_tokens').column('user_id').execute();

  await db.schema
    .createTable('email_outbox')
    .addColumn('id', 'varchar(36)', (col) => col.primaryKey())
    .addColumn('recipient', 'varchar(254)', (col) => col.notNull())
    .addColumn('template', 'varchar(40)', (col) => col.notNull())
    .addColumn('subject', 'varchar(200)', (col) => col.notNull())
    .addColumn('body_text', 'text')
    .addColumn('status', 'varchar(16)', (col) => col.notNull().defaultTo('queued'))
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('last_error', 'varchar(500)')
    .addColumn('next_attempt_at', 'bigint', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('sent_at', 'bigint')
    .execute();
  await db.schema.createIndex('email_outbox_status_next_idx').on('email_outbox').columns(['status', 'next_attempt_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('email_outbox').execute();
  await db.schema.dropTable('password_reset_tokens').execute();
  await db.schema.dropTable('email_verification_tokens').execute();
}
