/**
 * @module Pending sign-ins already used: the SHA-256 of each consumed state until its sign-in
 * expires, so that a replayed callback is refused before any request to the provider, on every
 * instance. The hourly sweep deletes expired rows.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_consumed_sign_ins')
    .addColumn('state_hash', 'varchar(64)', (col) => col.primaryKey())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('oauth_consumed_sign_ins_expires_at_idx').on('oauth_consumed_sign_ins').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oauth_consumed_sign_ins').execute();
}
