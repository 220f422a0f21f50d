/** A fresh PostgreSQL schema for server processes that share one database; dropped by the cleanup it registers. */
import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { postgresUrl } from './services.js';

export async function throwawaySchemaUrl(registerCleanup: (cleanup: () => Promise<void>) => void): Promise<string> {
  const schema = `gh_test_${randomBytes(6).toString('hex')}`;
  const admin = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgresUrl!, max: 1 }) }) });
  await sql`create schema ${sql.id(schema)}`.execute(admin);
  registerCleanup(async () => {
    await sql`drop schema ${sql.id(schema)} cascade`.execute(admin);
    await admin.destroy();
  });
  const url = new URL(postgresUrl!);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}
