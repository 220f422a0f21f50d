/** @module What the migrations that build indexes over big tables share on PostgreSQL. */
import { sql, type Kysely } from 'kysely';

/**
 * An index under one of the migration's names that is not valid is a CREATE INDEX CONCURRENTLY
 * that failed or is still running: the migration's `if not exists` would keep it, and the planner
 * never uses an invalid index. So the migration stops, naming the index and what to do.
 */
export async function refuseInvalidIndexes(db: Kysely<unknown>, migration: string, names: readonly string[]): Promise<void> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_catalog.pg_index i
    join pg_catalog.pg_class c on c.oid = i.indexrelid join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relname in (${sql.join(names)}) and not i.indisvalid`.execute(db);
  if (rows.length > 0) {
    const found = rows.map((row) => row.name).join(', ');
    throw new Error(
      `migration ${migration}: the index ${found} exists but is not valid (a CREATE INDEX CONCURRENTLY that failed or is still running). ` +
        `Let a running build finish, or drop it (DROP INDEX CONCURRENTLY ${found}), then run gatehouse migrate again.`,
    );
  }
}
