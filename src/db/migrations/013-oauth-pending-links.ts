/**
 * @module Provider links waiting for a second factor: a provider sign-in whose verified email
 * matches an account with two-factor sign-in on links nothing until the code step succeeds. The
 * link it would make waits here, keyed by the id of the two-factor challenge it was issued with,
 * until that challenge expires (5 minutes); the tokens are AES-256-GCM envelopes, as in
 * `accounts`. The code step takes the row (once); the hourly sweep deletes expired ones.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_pending_links')
    .addColumn('challenge_id', 'varchar(64)', (col) => col.primaryKey())
    // The id the `accounts` row will have: the sealed tokens are bound to it.
    .addColumn('account_id', 'varchar(36)', (col) => col.notNull())
    .addColumn('user_id', 'varchar(36)', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'varchar(32)', (col) => col.notNull())
    .addColumn('provider_account_id', 'varchar(255)', (col) => col.notNull())
    .addColumn('provider_login', 'varchar(255)', (col) => col.notNull())
    .addColumn('access_token_enc', 'text', (col) => col.notNull())
    .addColumn('refresh_token_enc', 'text')
    .addColumn('access_token_expires_at', 'bigint')
    .addColumn('scope', 'varchar(1024)', (col) => col.notNull().defaultTo(''))
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('oauth_pending_links_expires_at_idx').on('oauth_pending_links').column('expires_at').execute();
  await db.schema.createIndex('oauth_pending_links_user_idx').on('oauth_pending_links').column('user_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oauth_pending_links').execute();
}
