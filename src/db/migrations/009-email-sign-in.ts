/**
 * @module Passwordless sign-in by email (DESIGN §9.9): one row per address holds both the link's
 * token (SHA-256 of its secret) and the 6-digit code (an HMAC under a server key, so the row alone
 * does not let anyone try the million codes offline), the wrong codes tried so far, and the
 * expiry. The unique address makes "a newer request replaces the older one" one row by
 * construction; `user_id` is null for an unknown address when sign-up by email is on.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('email_sign_in_tokens')
    .addColumn('id', 'varchar(36)', (col) => col.primaryKey())
    .addColumn('email', 'varchar(320)', (col) => col.notNull().unique())
    .addColumn('user_id', 'varchar(36)', (col) => col.references('users.id').onDelete('cascade'))
    .addColumn('secret_hash', 'varchar(64)', (col) => col.notNull())
    .addColumn('code_mac', 'varchar(64)', (col) => col.notNull())
    .addColumn('code_attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('return_to', 'text')
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('email_sign_in_tokens_expires_idx').on('email_sign_in_tokens').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('email_sign_in_tokens').execute();
}
