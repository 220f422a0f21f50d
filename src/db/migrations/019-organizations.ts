/**
 * @module Organizations: the companies an app's customers are, their members with a role each, and
 * the invitations that bring people in.
 *
 * - `organizations.slug` is unique (lower-case `[a-z0-9-]`); a member row cascades with its
 *   organization and with its user.
 * - `organization_invitations` holds one pending invitation per organization and address
 *   (re-inviting replaces it): the token is `<id>.<secret>`, only the secret's SHA-256 is kept.
 * - `oidc_records.scope` (grants only): the scopes a grant gives, as ` openid organizations `, so
 *   removing a member revokes, in one statement, the grants whose tokens name their organizations.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('organizations')
    .addColumn('id', 'varchar(36)', (col) => col.primaryKey())
    .addColumn('name', 'varchar(200)', (col) => col.notNull())
    .addColumn('slug', 'varchar(64)', (col) => col.notNull().unique())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('organizations_created_idx').on('organizations').columns(['created_at', 'id']).execute();

  await db.schema
    .createTable('organization_members')
    .addColumn('organization_id', 'varchar(36)', (col) => col.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'varchar(36)', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'varchar(64)', (col) => col.notNull())
    .addColumn('joined_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('organization_members_pk', ['organization_id', 'user_id'])
    .execute();
  await db.schema.createIndex('organization_members_user_idx').on('organization_members').column('user_id').execute();

  await db.schema
    .createTable('organization_invitations')
    .addColumn('id', 'varchar(32)', (col) => col.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (col) => col.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('email', 'varchar(320)', (col) => col.notNull())
    .addColumn('role', 'varchar(64)', (col) => col.notNull())
    .addColumn('secret_hash', 'varchar(64)', (col) => col.notNull())
    .addColumn('invited_by', 'varchar(36)')
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addUniqueConstraint('organization_invitations_email_uq', ['organization_id', 'email'])
    .execute();
  await db.schema.createIndex('organization_invitations_expires_idx').on('organization_invitations').column('expires_at').execute();

  // Nullable, no default: PostgreSQL adds it without rewriting the table.
  await db.schema.alterTable('oidc_records').addColumn('scope', 'varchar(1000)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oidc_records').dropColumn('scope').execute();
  await db.schema.dropTable('organization_invitations').execute();
  await db.schema.dropTable('organization_members').execute();
  await db.schema.dropTable('organizations').execute();
}
