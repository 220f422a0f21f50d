/**
 * @module Webhooks: the endpoints operators register, the events waiting to be delivered, one
 * delivery per event and endpoint, and each delivery's attempts.
 *
 * - `webhook_endpoints.events` is the filter as `,user.created,session.created,` (or `,*,`), so the
 *   transaction that reports a change fans its event out with one INSERT … SELECT and a LIKE,
 *   without reading the endpoints first. The signing secret is sealed with the envelope.
 * - An event row is only written when some enabled endpoint wants it: an install without
 *   webhooks writes nothing on its sign-in paths.
 * - `seq` (identity/autoincrement) orders one user's deliveries to one endpoint: a delivery waits
 *   while an earlier one of the same endpoint and user is pending.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'varchar(36)', (col) => col.primaryKey())
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('events', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('secret_sealed', 'text', (col) => col.notNull())
    .addColumn('previous_secret_sealed', 'text')
    .addColumn('previous_secret_until', 'bigint')
    .addColumn('disabled_at', 'bigint')
    .addColumn('disabled_reason', 'varchar(32)')
    .addColumn('failing_since', 'bigint')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();

  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'varchar(40)', (col) => col.primaryKey())
    .addColumn('type', 'varchar(64)', (col) => col.notNull())
    .addColumn('user_id', 'varchar(36)')
    .addColumn('payload', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('webhook_events_created_at_idx').on('webhook_events').column('created_at').execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('seq', pg ? sql`bigint generated always as identity` : sql`integer`, (col) => (pg ? col.primaryKey() : col.primaryKey().autoIncrement()))
    .addColumn('id', 'varchar(36)', (col) => col.notNull().unique())
    .addColumn('event_id', 'varchar(40)', (col) => col.notNull().references('webhook_events.id').onDelete('cascade'))
    .addColumn('endpoint_id', 'varchar(36)', (col) => col.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('user_id', 'varchar(36)')
    .addColumn('status', 'varchar(16)', (col) => col.notNull())
    .addColumn('attempt_count', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('claim_id', 'varchar(36)')
    .addColumn('locked_until', 'bigint')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
  // The worker claims due deliveries in this index's order: a round walks it and stops after the
  // rows it claims (and the few it skips), instead of sorting every due row of a large backlog.
  await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['status', 'next_attempt_at', 'seq']).execute();
  await db.schema.createIndex('webhook_deliveries_order_idx').on('webhook_deliveries').columns(['endpoint_id', 'user_id', 'status', 'seq']).execute();
  await db.schema.createIndex('webhook_deliveries_event_idx').on('webhook_deliveries').column('event_id').execute();

  await db.schema
    .createTable('webhook_delivery_attempts')
    .addColumn('id', pg ? sql`bigint generated always as identity` : sql`integer`, (col) => (pg ? col.primaryKey() : col.primaryKey().autoIncrement()))
    .addColumn('delivery_id', 'varchar(36)', (col) => col.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('at', 'bigint', (col) => col.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer', (col) => col.notNull())
    .addColumn('error', 'varchar(500)')
    .execute();
  await db.schema.createIndex('webhook_delivery_attempts_delivery_idx').on('webhook_delivery_attempts').column('delivery_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_delivery_attempts').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_events').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
}
