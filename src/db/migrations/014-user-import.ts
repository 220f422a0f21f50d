/**
 * @module Users brought in from another system: the id that system knew them by, kept so that a
 * second run of the same import, or a later one with changed addresses, finds them again (one
 * person, one external id: unique; most users have none, and both databases let NULLs repeat).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('external_id', 'varchar(255)').execute();
  await db.schema.createIndex('users_external_id_uq').on('users').column('external_id').unique().execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('users_external_id_uq').execute();
  await db.schema.alterTable('users').dropColumn('external_id').execute();
}
