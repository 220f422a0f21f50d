/** Migrations on PostgreSQL keep to their own schema, whatever else the database holds. */
import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { migrateToLatest } from '../src/db/connect.js';
import { openTestDatabase } from './support/harness.js';
import { postgresUrl } from './support/services.js';

describe.skipIf(!postgresUrl)('PostgreSQL introspection [postgres]', () => {
  const neighbour = `gh_neighbour_${randomBytes(6).toString('hex')}`;
  let admin: Kysely<unknown>;

  beforeAll(async () => {
    admin = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgresUrl!, max: 1 }) }) });
    // Another schema in the same database that already holds Kysely's bookkeeping tables.
    await sql`create schema ${sql.id(neighbour)}`.execute(admin);
    await sql`create table ${sql.id(neighbour, 'kysely_migration_lock')} (id varchar(255) primary key, is_locked integer not null default 0)`.execute(admin);
    await sql`create table ${sql.id(neighbour, 'kysely_migration')} (name varchar(255) primary key, timestamp varchar(255) not null)`.execute(admin);
  });

  afterAll(async () => {
    await sql`drop schema if exists ${sql.id(neighbour)} cascade`.execute(admin);
    await admin.destroy();
  });

  test("a neighbour schema's Kysely tables do not stop our migrations", async () => {
    const { database, drop } = await openTestDatabase('postgres');
    try {
      const { results = [] } = await migrateToLatest(database);
      expect(results.length).toBeGreaterThan(0);
      expect(results.every((result) => result.status === 'Success')).toBe(true);
      const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(database.kysely);
      expect(rows.map((row) => row.name)).toEqual(results.map((result) => result.migrationName));
      const neighbours = await sql<{ count: number }>`select count(*)::int as count from ${sql.id(neighbour, 'kysely_migration')}`.execute(admin);
      expect(neighbours.rows[0]?.count).toBe(0);
    } finally {
      await drop();
    }
  });
});
