/** @module Users, sessions and the audit trail (foundation). */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'varchar(36)', (col) => col.primaryKey())
    .addColumn('email', 'varchar(254)', (col) => col.unique())
    .addColumn('password_hash', 'varchar(100)')
    .addColumn('email_verified', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('preferences', 'text', (col) => col.notNull().defaultTo('{}'))
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('last_login_at', 'bigint')
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'varchar(36)', (col) => col.primaryKey())
    .addColumn('user_id', 'varchar(36)', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'varchar(64)', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('sessions_user_id_idx').on('sessions').column('user_id').execute();
  await db.schema.createIndex('sessions_expires_at_idx').on('sessions').column('expires_at').execute();

  await db.schema
    .createTable('audit_events')
    // An ever-growing sequence gives the trail a stable order: identity on PostgreSQL,
    // INTEGER PRIMARY KEY AUTOINCREMENT on SQLite (never reuses an id).
    .addColumn('id', isPostgres(db) ? sql`bigint generated always as identity` : sql`integer`, (col) =>
      isPostgres(db) ? col.primaryKey() : col.primaryKey().autoIncrement(),
    )
    .addColumn('event_type', 'varchar(40)', (col) => col.notNull())
    .addColumn('user_id', 'varchar(36)')
    .addColumn('ip', 'varchar(64)')
    .addColumn('user_agent', 'varchar(512)')
    .addColumn('metadata', 'text', (col) => col.notNull().defaultTo('{}'))
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('audit_events_created_at_idx').on('audit_events').column('created_at').execute();
  await db.schema.createIndex('audit_events_user_id_idx').on('audit_events').column('user_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_events').execute();
  await db.schema.dropTable('sessions').execute();
  await db.schema.dropTable('users').execute();
}
