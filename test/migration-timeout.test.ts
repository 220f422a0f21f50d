/**
 * Migrations run under their own time bound on PostgreSQL, not DATABASE_QUERY_TIMEOUT's: a
 * migration may build an index over every row (several seconds on a million users), while the
 * requests' statements stay bounded. Here the requests' bound is 1 ms — shorter than building any
 * of the migrations' indexes — and every migration still applies.
 */
import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, test } from 'vitest';
import { migrateToLatest, openDatabase, pendingMigrations, type DatabaseHandle } from '../src/db/connect.js';
import { postgresUrl } from './support/services.js';

describe.skipIf(!postgresUrl)('migrations and DATABASE_QUERY_TIMEOUT (PostgreSQL)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A fresh schema, and a handle on it whose requests' statements are bounded at `queryTimeoutMs`. */
  async function database(queryTimeoutMs: number): Promise<{ handle: DatabaseHandle; reader: DatabaseHandle }> {
    const schema = `gh_test_${randomBytes(6).toString('hex')}`;
    const admin = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgresUrl!, max: 1 }) }) });
    await sql`create schema ${sql.id(schema)}`.execute(admin);
    cleanups.push(async () => {
      await sql`drop schema ${sql.id(schema)} cascade`.execute(admin);
      await admin.destroy();
    });
    const handle = openDatabase({ kind: 'postgres', connectionString: postgresUrl! }, { postgresSchema: schema, poolSize: 2, queryTimeoutMs });
    // The same schema under the default bound, to look at the result (a 1 ms bound may refuse any statement on a busy machine).
    const reader = openDatabase({ kind: 'postgres', connectionString: postgresUrl! }, { postgresSchema: schema, poolSize: 1 });
    cleanups.push(() => handle.close());
    cleanups.push(() => reader.close());
    return { handle, reader };
  }

  test('every migration applies under a 1 ms request bound', async () => {
    const { handle, reader } = await database(1);
    expect((await migrateToLatest(handle)).error).toBeUndefined();
    expect(await pendingMigrations(reader)).toEqual([]);
    // The tables are there, in the handle's own schema.
    expect(await reader.kysely.selectFrom('organizations').select('id').execute()).toEqual([]);
  });
});
