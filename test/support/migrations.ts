/** Migrating a test database to just before one migration, to test that migration over existing rows. */
import { Migrator, sql } from 'kysely';
import type { DatabaseHandle } from '../../src/db/connect.js';
import { migrations } from '../../src/db/migrations/index.js';

async function currentSchema(database: DatabaseHandle): Promise<string | undefined> {
  if (database.dialect !== 'postgres') return undefined;
  return (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.kysely)).rows[0]?.schema;
}

/** Applies the migrations before `migration` only. */
export async function migrateToBefore(database: DatabaseHandle, migration: string): Promise<void> {
  const names = Object.keys(migrations).sort();
  const schema = await currentSchema(database);
  const migrator = new Migrator({
    db: database.kysely,
    provider: { getMigrations: async () => migrations },
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error } = await migrator.migrateTo(names[names.indexOf(migration) - 1]!);
  if (error !== undefined) throw error instanceof Error ? error : new Error(String(error));
}
