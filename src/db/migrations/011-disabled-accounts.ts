/**
 * @module Disabled accounts (DESIGN §9.6): when an operator disabled the user (null: not
 * disabled). A disabled user cannot sign in by any method; their sessions were revoked when the
 * column was set, so the session check reads nothing new.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('disabled_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('disabled_at').execute();
}
