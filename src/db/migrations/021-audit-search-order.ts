/**
 * @module Indexes for the operators' audit search (`GET /api/admin/audit`, `gatehouse audit`),
 * which lists events newest first by time, filtered by user, by type and by a time range.
 *
 * Three indexes in the list's order — `(created_at, id)`, `(user_id, created_at, id)`,
 * `(event_type, created_at, id)` — so that a page, whatever its filter, is a backward walk of one
 * of them from the cursor (or from the range's end) that stops after a page of rows. Before, the
 * list was ordered by id alone, and a filter by type and week read every row of that week and
 * sorted them: 91 ms (SQLite) and 446 ms (PostgreSQL) at p99 with 20 million rows
 * (docs/performance.md). They replace the indexes on `created_at` and on `user_id` alone, whose
 * every use (the retention sweep, a person's rows in the export and the erasure) their first
 * columns serve.
 *
 * On PostgreSQL they are built in the migration's transaction (writes to `audit_events` — a
 * sign-in's row — wait while they build); each can be built beforehand with `CREATE INDEX
 * CONCURRENTLY` under the same name, and the migration then keeps it (docs/upgrading.md).
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { refuseInvalidIndexes } from './postgres-indexes.js';

const MIGRATION = '021-audit-search-order';
const INDEXES = [
  ['audit_events_time_idx', ['created_at', 'id']],
  ['audit_events_user_time_idx', ['user_id', 'created_at', 'id']],
  ['audit_events_type_time_idx', ['event_type', 'created_at', 'id']],
] as const;
const REPLACED = [
  ['audit_events_created_at_idx', 'created_at'],
  ['audit_events_user_id_idx', 'user_id'],
] as const;

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await refuseInvalidIndexes(
      db,
      MIGRATION,
      INDEXES.map(([name]) => name),
    );
    await build(db);
  } else {
    // Kysely runs SQLite's migrations outside a transaction: this one is all or nothing.
    await db.transaction().execute(build);
  }
}

async function build(db: Kysely<unknown>): Promise<void> {
  for (const [name, columns] of INDEXES)
    await sql`create index if not exists ${sql.id(name)} on audit_events (${sql.join(columns.map((column) => sql.id(column)))})`.execute(db);
  // Dropped last: on PostgreSQL, DROP INDEX takes an ACCESS EXCLUSIVE lock on the table, held to
  // the end of the transaction, which is then moments away (the builds above take SHARE only).
  for (const [name] of REPLACED) await sql`drop index if exists ${sql.id(name)}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [name, column] of REPLACED) await sql`create index if not exists ${sql.id(name)} on audit_events (${sql.id(column)})`.execute(db);
  for (const [name] of INDEXES) await sql`drop index if exists ${sql.id(name)}`.execute(db);
}
