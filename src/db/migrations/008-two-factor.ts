/**
 * @module Two-factor sign-in (DESIGN §9.3): a TOTP secret per user, sealed in the AES-256-GCM
 * envelope (crypto/envelope.ts) and enforced only once `enabled_at` is set; the last time step
 * whose code was accepted, so a code works once; recovery codes, only their SHA-256 stored; and
 * on each session the ways its sign-in was proven (`password`, `totp`, …) so an app can demand a
 * second factor.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('user_totp')
    .addColumn('user_id', 'varchar(36)', (col) => col.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('secret_enc', 'text', (col) => col.notNull())
    .addColumn('enabled_at', 'bigint')
    .addColumn('last_used_step', 'bigint')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createTable('recovery_codes')
    .addColumn('id', 'varchar(36)', (col) => col.primaryKey())
    .addColumn('user_id', 'varchar(36)', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'varchar(64)', (col) => col.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('recovery_codes_user_hash_uq').on('recovery_codes').columns(['user_id', 'code_hash']).unique().execute();
  await db.schema
    .alterTable('sessions')
    .addColumn('methods', 'varchar(128)', (col) => col.notNull().defaultTo(''))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('methods').execute();
  await db.schema.dropTable('recovery_codes').execute();
  await db.schema.dropTable('user_totp').execute();
}
