/**
 * Migrations run under their own time bound on PostgreSQL, not DATABASE_QUERY_TIMEOUT's: a
 * migration may build an index over every row (several seconds on a million users), while the
 * requests' statements stay bounded. Here the requests' bound is 1 ms — shorter than building any
 * of the migrations' indexes — and every migration still applies, while a request's statement on
 * the same handle runs under 1 ms.
 */
import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, test } from 'vitest';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../src/db/connect.js';
import { postgresUrl } from './support/services.js';

describe.skipIf(!postgresUrl)('migrations and DATABASE_QUERY_TIMEOUT (PostgreSQL)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function database(queryTimeoutMs: number): Promise<DatabaseHandle> {
    const schema = `gh_test_${randomBytes(6).toString('hex')}`;
    const admin = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgresUrl!, max: 1 }) }) });
    await sql`create schema ${sql.id(schema)}`.execute(admin);
    cleanups.push(async () => {
      await sql`drop schema ${sql.id(schema)} cascade`.execute(admin);
      await admin.destroy();
    });
    const handle = openDatabase({ kind: 'postgres', connectionString: postgresUrl! }, { postgresSchema: schema, poolSize: 2, queryTimeoutMs });
    cleanups.push(() => handle.close());
    return handle;
  }

  test('every migration applies under a 1 ms request bound; the requests keep theirs', async () => {
    const db = await database(1);
    expect((await migrateToLatest(db)).error).toBeUndefined();
    const { rows } = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(db.kysely);
    expect(rows[0]?.statement_timeout).toBe('1ms');
    // The tables are there, in the handle's own schema.
    expect(await db.kysely.selectFrom('organizations').select('id').execute()).toEqual([]);
  });
});
