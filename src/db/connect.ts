/** @module Opens the database named by the configuration: SQLite (better-sqlite3) or PostgreSQL (pg). */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type MigrationResultSet } from 'kysely';
import pg from 'pg';
import type { DatabaseTarget } from '../config.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';

export interface DatabaseHandle {
  kysely: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
  /** Answers whether the database takes a query right now (for /readyz). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

const INT8_OID = 20;

export interface OpenDatabaseOptions {
  /** PostgreSQL only: a schema to create and use (tests use a throwaway one per run). */
  postgresSchema?: string;
  /** PostgreSQL only: pool size. */
  poolSize?: number;
}

export function openDatabase(target: DatabaseTarget, options: OpenDatabaseOptions = {}): DatabaseHandle {
  if (target.kind === 'sqlite') {
    if (target.filename !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(target.filename)), { recursive: true });
    const connection = new SQLite(target.filename);
    connection.pragma('journal_mode = WAL');
    connection.pragma('synchronous = NORMAL');
    connection.pragma('foreign_keys = ON');
    connection.pragma('busy_timeout = 5000');
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
    return {
      kysely,
      dialect: 'sqlite',
      ping: async () => {
        await sql`select 1`.execute(kysely);
      },
      close: () => kysely.destroy(),
    };
  }

  const pool = new pg.Pool({
    connectionString: target.connectionString,
    max: options.poolSize ?? 10,
    // Bounded waits: when PostgreSQL is down, a request fails fast with 503 instead of hanging.
    connectionTimeoutMillis: 3000,
    query_timeout: 10_000,
    idleTimeoutMillis: 30_000,
    ...(options.postgresSchema ? { options: `-c search_path=${options.postgresSchema}` } : {}),
    // BIGINT (epoch milliseconds) fits a JS number exactly; pg returns int8 as a string otherwise.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that loses its server emits 'error' on the pool; without a listener that
  // would crash the process. The next query reports the outage (503) instead.
  pool.on('error', () => {});
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    kysely,
    dialect: 'postgres',
    ping: async () => {
      await sql`select 1`.execute(kysely);
    },
    close: () => kysely.destroy(),
  };
}

/** Applies every pending migration; throws with the failing migration's error. */
export async function migrateToLatest(db: DatabaseHandle): Promise<MigrationResultSet> {
  // Kysely looks for its bookkeeping tables in every schema unless told which one: another
  // schema's kysely_migration (another app, another test run) would be taken for ours.
  const migrationTableSchema =
    db.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely)).rows[0]?.schema
      : undefined;
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => migrations },
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
  // Kysely's migrator also lists the tables of every schema in the database (to find its own),
  // calling pg_get_serial_sequence on each; a schema or table that someone else drops during
  // that query fails it with 3F000/42P01 though nothing is wrong with ours (seen with parallel
  // test runs sharing one database). PostgreSQL migrations run in a transaction, so a retry is safe.
  for (let attempt = 1; ; attempt += 1) {
    const result = await migrator.migrateToLatest();
    if (!result.error) return result;
    const code = (result.error as { code?: unknown }).code;
    if (db.dialect !== 'postgres' || !CONCURRENT_DROP_CODES.has(String(code)) || attempt >= 5) throw result.error;
  }
}

/** invalid_schema_name, undefined_table: what a concurrently dropped schema or table raises. */
const CONCURRENT_DROP_CODES = new Set(['3F000', '42P01']);
