/**
 * @module Passkeys (DESIGN §9.4): the WebAuthn credentials a user registered. The credential id
 * (base64url, unique: an authenticator's credential belongs to one account) is what a sign-in
 * presents; the public key (COSE, base64url) checks its signature; the signature counter is kept
 * so a regression (a cloned authenticator) is refused. Nothing stored here is a secret.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('passkeys')
    .addColumn('id', 'varchar(36)', (col) => col.primaryKey())
    .addColumn('user_id', 'varchar(36)', (col) => col.notNull().references('users.id').onDelete('cascade'))
    // At most 1023 bytes by the WebAuthn spec: 1364 characters of base64url.
    .addColumn('credential_id', 'varchar(1400)', (col) => col.notNull())
    .addColumn('public_key', 'text', (col) => col.notNull())
    .addColumn('counter', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('transports', 'varchar(200)', (col) => col.notNull().defaultTo(''))
    .addColumn('name', 'varchar(200)', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('passkeys_credential_id_uq').on('passkeys').column('credential_id').unique().execute();
  await db.schema.createIndex('passkeys_user_idx').on('passkeys').column('user_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('passkeys').execute();
}
