/** Migrations on PostgreSQL see only their own schema, whatever else the database holds. */
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

  test("a neighbour schema's Kysely tables neither stop our migrations nor show up in our introspection", async () => {
    const { database, drop } = await openTestDatabase('postgres');
    try {
      const { results = [] } = await migrateToLatest(database);
      expect(results.length).toBeGreaterThan(0);
      expect(results.every((result) => result.status === 'Success')).toBe(true);
      const tables = await database.kysely.introspection.getTables({ withInternalKyselyTables: true });
      const schemas = new Set(tables.map((table) => table.schema));
      expect(schemas.size).toBe(1);
      expect(schemas.has(neighbour)).toBe(false);
      const users = tables.find((table) => table.name === 'users');
      expect(users?.columns.map((column) => column.name)).toContain('email');
      expect(tables.some((table) => table.name === 'kysely_migration_lock')).toBe(true);
      const withoutInternal = await database.kysely.introspection.getTables();
      expect(withoutInternal.some((table) => table.name.startsWith('kysely_'))).toBe(false);
    } finally {
      await drop();
    }
  });
});
