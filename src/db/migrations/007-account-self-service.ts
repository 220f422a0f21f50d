/**
 * @module Account self-service (DESIGN §9.2): what a person sees of their sessions (where from,
 * which browser, when last used) and the pending email changes. A session row keeps the client's
 * IP and user agent of its sign-in; `last_seen_at` is refreshed at most once a minute, off the
 * response path. An email change token is `<id>.<secret>` like the others: only the SHA-256 of
 * its secret is stored, beside the address it would move the account to.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('ip', 'varchar(64)').execute();
  await db.schema.alterTable('sessions').addColumn('user_agent', 'varchar(512)').execute();
  await db.schema.alterTable('sessions').addColumn('last_seen_at', 'bigint').execute();
  await db.schema
    .createTable('email_change_tokens')
    .addColumn('id', 'varchar(64)', (col) => col.primaryKey())
    .addColumn('user_id', 'varchar(36)', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('new_email', 'varchar(320)', (col) => col.notNull())
    .addColumn('secret_hash', 'varchar(64)', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('email_change_tokens_user_id_idx').on('email_change_tokens').column('user_id').execute();
  await db.schema.createIndex('email_change_tokens_expires_at_idx').on('email_change_tokens').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('email_change_tokens').execute();
  await db.schema.alterTable('sessions').dropColumn('last_seen_at').execute();
  await db.schema.alterTable('sessions').dropColumn('user_agent').execute();
  await db.schema.alterTable('sessions').dropColumn('ip').execute();
}
