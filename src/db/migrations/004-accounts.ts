/**
 * @module Linked provider accounts (issue 5). One row per (provider, provider account); the
 * unique index decides a race between two callbacks linking the same account.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'varchar(36)', (col) => col.primaryKey())
    .addColumn('user_id', 'varchar(36)', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'varchar(32)', (col) => col.notNull())
    .addColumn('provider_account_id', 'varchar(255)', (col) => col.notNull())
    .addColumn('provider_login', 'varchar(255)', (col) => col.notNull())
    .addColumn('access_token_enc', 'text', (col) => col.notNull())
    .addColumn('refresh_token_enc', 'text')
    .addColumn('access_token_expires_at', 'bigint')
    .addColumn('scope', 'varchar(1024)', (col) => col.notNull().defaultTo(''))
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('accounts_provider_account_uq').on('accounts').columns(['provider', 'provider_account_id']).unique().execute();
  await db.schema.createIndex('accounts_user_id_idx').on('accounts').column('user_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('accounts').execute();
}
