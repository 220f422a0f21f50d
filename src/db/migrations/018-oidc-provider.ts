/**
 * @module Gatehouse as an OpenID Connect provider: the engine's records, the signing keys, the
 * registered clients.
 *
 * - `oidc_records` holds what the engine (oidc-provider) stores through its adapter: sessions,
 *   interactions, grants, codes, tokens. `id` is the SHA-256 of the record's id (the id of a code,
 *   a token or a session is its value), and the payload is sealed with the envelope, so a
 *   database dump holds no usable code, token or session. `grant_id`, `account_id` and `client_id` let a grant's tokens, or every grant of an
 *   account, be revoked with one statement.
 * - `oidc_signing_keys`: the public JWK, and the private JWK sealed with the envelope (bound to
 *   the key id). `signs_from` lets a rotated key be published before it signs.
 * - `oidc_clients`: a confidential client's secret as its SHA-256 (the secret is 32 random bytes;
 *   a slow hash would add nothing), the rest of its registration as JSON.
 * - `oidc_logout_notices`: back-channel logouts owed to clients (one per client and account while
 *   pending), sent and retried by the worker; the logout token is signed at send time, not kept.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oidc_records')
    .addColumn('model', 'varchar(40)', (col) => col.notNull())
    .addColumn('id', 'varchar(64)', (col) => col.notNull())
    .addColumn('payload', 'text', (col) => col.notNull())
    .addColumn('grant_id', 'varchar(64)')
    .addColumn('user_code', 'varchar(64)')
    .addColumn('uid', 'varchar(64)')
    .addColumn('account_id', 'varchar(36)')
    .addColumn('client_id', 'varchar(64)')
    .addColumn('expires_at', 'bigint')
    .addColumn('consumed_at', 'bigint')
    .addPrimaryKeyConstraint('oidc_records_pk', ['model', 'id'])
    .execute();
  // Partial: most records (a client's access tokens) have no grant, uid, user code or account, and
  // each token issued is one insert — it updates only the indexes its row belongs in.
  await db.schema.createIndex('oidc_records_grant_idx').on('oidc_records').column('grant_id').where('grant_id', 'is not', null).execute();
  await db.schema.createIndex('oidc_records_uid_idx').on('oidc_records').columns(['model', 'uid']).where('uid', 'is not', null).execute();
  await db.schema.createIndex('oidc_records_user_code_idx').on('oidc_records').columns(['model', 'user_code']).where('user_code', 'is not', null).execute();
  await db.schema.createIndex('oidc_records_account_idx').on('oidc_records').columns(['account_id', 'model']).where('account_id', 'is not', null).execute();
  await db.schema.createIndex('oidc_records_expires_idx').on('oidc_records').column('expires_at').execute();

  await db.schema
    .createTable('oidc_signing_keys')
    .addColumn('kid', 'varchar(64)', (col) => col.primaryKey())
    .addColumn('alg', 'varchar(16)', (col) => col.notNull())
    .addColumn('public_jwk', 'text', (col) => col.notNull())
    .addColumn('private_jwk_sealed', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('signs_from', 'bigint', (col) => col.notNull())
    .addColumn('retired_at', 'bigint')
    .execute();

  await db.schema
    .createTable('oidc_clients')
    .addColumn('client_id', 'varchar(64)', (col) => col.primaryKey())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('secret_hash', 'varchar(64)')
    .addColumn('registration', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();

  await db.schema
    .createTable('oidc_logout_notices')
    .addColumn('id', 'varchar(36)', (col) => col.primaryKey())
    .addColumn('client_id', 'varchar(64)', (col) => col.notNull())
    .addColumn('account_id', 'varchar(36)', (col) => col.notNull())
    .addColumn('status', 'varchar(16)', (col) => col.notNull())
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (col) => col.notNull())
    .addColumn('locked_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('oidc_logout_notices_due_idx').on('oidc_logout_notices').columns(['status', 'next_attempt_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oidc_logout_notices').execute();
  await db.schema.dropTable('oidc_clients').execute();
  await db.schema.dropTable('oidc_signing_keys').execute();
  await db.schema.dropTable('oidc_records').execute();
}
