/**
 * Migration 021 (src/db/migrations/021-audit-search-order.ts) on every available database: built
 * over audit rows already there, the three indexes in the audit list's order replace the two of
 * one column, and `down` puts those back. On SQLite, the plan of a search by type and time walks
 * the type's index in the list's order (no sort).
 */
import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createAdminStore } from '../src/db/admin-store.js';
import { migrateToLatest, type DatabaseHandle } from '../src/db/connect.js';
import * as migration from '../src/db/migrations/021-audit-search-order.js';
import { describeEachDialect, openTestDatabase } from './support/harness.js';
import { migrateToBefore } from './support/migrations.js';

const THIS_MIGRATION = '021-audit-search-order';
const T0 = Date.UTC(2026, 0, 1);

async function auditIndexes(database: DatabaseHandle): Promise<string[]> {
  const query =
    database.dialect === 'postgres'
      ? sql<{
          name: string;
        }>`select indexname as name from pg_indexes where schemaname = current_schema() and tablename = 'audit_events' and indexname <> 'audit_events_pkey'`
      : sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'audit_events' and sql is not null`;
  return (await query.execute(database.kysely)).rows.map((row) => row.name).sort();
}

describeEachDialect('audit search indexes (migration 021)', (dialect) => {
  let database: DatabaseHandle;
  let drop: () => Promise<void>;
  beforeEach(async () => {
    ({ database, drop } = await openTestDatabase(dialect));
  });
  afterEach(async () => {
    await drop();
  });

  test('built over existing rows: the list-order indexes replace the single-column ones, the search reads the rows in order; down restores them', async () => {
    await migrateToBefore(database, THIS_MIGRATION);
    expect(await auditIndexes(database)).toEqual(['audit_events_created_at_idx', 'audit_events_user_id_idx']);
    await database.kysely
      .insertInto('audit_events')
      .values(
        [30, 10, 20].map((seconds) => ({
          event_type: 'logout',
          user_id: null,
          ip: null,
          user_agent: null,
          metadata: '{}',
          created_at: T0 + seconds * 1000,
        })),
      )
      .execute();
    await migrateToLatest(database);
    expect(await auditIndexes(database)).toEqual(['audit_events_time_idx', 'audit_events_type_time_idx', 'audit_events_user_time_idx']);
    const found = await createAdminStore(database.kysely).searchAuditEvents({ userId: null, type: 'logout', since: T0, until: null, limit: 10, before: null });
    expect(found.map((event) => event.at.getTime() - T0)).toEqual([30_000, 20_000, 10_000]);

    if (dialect === 'sqlite') {
      // A first page and a page after a cursor: both a walk of the type's index, never a sort.
      for (const after of [sql``, sql`and (created_at, id) < (${T0 + 20_000}, ${2})`]) {
        const { rows } = await sql<{ detail: string }>`explain query plan
          select * from audit_events where event_type = ${'logout'} and created_at >= ${T0} and created_at <= ${T0 + 60_000} ${after}
          order by created_at desc, id desc limit 51`.execute(database.kysely);
        const plan = rows.map((row) => row.detail).join('\n');
        expect(plan).toMatch(/USING INDEX audit_events_type_time_idx/);
        expect(plan).not.toMatch(/TEMP B-TREE/);
      }
    }

    await migration.down(database.kysely as unknown as Kysely<unknown>);
    expect(await auditIndexes(database)).toEqual(['audit_events_created_at_idx', 'audit_events_user_id_idx']);
  });
});
