/** @module Opens the database named by the configuration: SQLite (better-sqlite3) or PostgreSQL (pg). */
import path from 'node:path';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  Migrator,
  PostgresDialect,
  PostgresIntrospector,
  SqliteDialect,
  SqliteDriver,
  sql,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Driver,
  type MigrationResultSet,
  type PostgresPool,
  type PostgresPoolClient,
  type SqliteDatabase,
  type TableMetadata,
} from 'kysely';
import type pg from 'pg';
import type { DatabaseTarget } from './settings.js';
import { requireOptional } from '../lazy-require.js';
import { createPrivateFile, makePrivateDirectory } from '../private-files.js';
import { migrations } from './migrations/index.js';
import { preparedName } from './prepared-statements.js';
import type { Database } from './schema.js';

export interface DatabaseHandle {
  kysely: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
  /** The pg pool behind Kysely when the dialect is PostgreSQL (the rate limit store shares it). */
  postgresPool: pg.Pool | null;
  /** Answers whether the database takes a query right now, within PING_TIMEOUT_MS whatever it does (for /readyz). */
  ping(): Promise<void>;
  /**
   * Makes sure data just purged (an email's link) is gone from disk, not only from view.
   * SQLite: deleted content is zeroed (secure_delete) and the WAL, which still holds the old
   * page images, is checkpointed and truncated. PostgreSQL: nothing to do here — a dead row
   * version is invisible to every reader and a dump, and autovacuum reclaims it.
   */
  scrubPurgedData(): Promise<void>;
  close(): Promise<void>;
}

const INT8_OID = 20;
/** What DATABASE_QUERY_TIMEOUT defaults to. */
export const DEFAULT_QUERY_TIMEOUT_MS = 5000;
/**
 * How much longer than the server's statement_timeout the client waits for an answer. A server
 * that answers cancels a slow statement itself (the connection stays usable); only a connection
 * that does not answer at all is given up by the client, and replaced.
 */
const CLIENT_TIMEOUT_GRACE_MS = 500;
/** /readyz must answer within 2 s whatever the database does (DESIGN §9.7). */
const PING_TIMEOUT_MS = 1500;

/**
 * Kysely's PostgreSQL introspector lists the tables of every schema and calls
 * has_schema_privilege() on each by name; a schema dropped meanwhile by another client (a
 * concurrent test run's throwaway schema) makes that query fail. The migrator only needs the
 * tables of the schema we use, so only those are listed.
 */
class CurrentSchemaIntrospector extends PostgresIntrospector {
  readonly #db: Kysely<unknown>;

  constructor(db: Kysely<unknown>) {
    super(db);
    this.#db = db;
  }

  override async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string; kind: string }>`
      select c.relname as name, n.nspname as schema, c.relkind as kind
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'v', 'p')`.execute(this.#db);
    return rows.map((row) => ({ name: row.name, schema: row.schema, isView: row.kind === 'v', columns: [] }));
  }
}

class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}

export interface OpenDatabaseOptions {
  /** PostgreSQL only: a schema to create and use (tests use a throwaway one per run). */
  postgresSchema?: string;
  /** PostgreSQL only: pool size. */
  poolSize?: number;
  /** PostgreSQL only: DATABASE_QUERY_TIMEOUT, the longest a statement may take (default 5 s). */
  queryTimeoutMs?: number;
}

export function openDatabase(target: DatabaseTarget, options: OpenDatabaseOptions = {}): DatabaseHandle {
  if (target.kind === 'sqlite') {
    const connection = openSqliteFile(target.filename);
    const kysely = new Kysely<Database>({ dialect: new RollbackTolerantSqliteDialect(connection) });
    return {
      kysely,
      dialect: 'sqlite',
      postgresPool: null,
      ping: () => within(PING_TIMEOUT_MS, sql`select 1`.execute(kysely)),
      scrubPurgedData: async () => {
        // Through Kysely, so it waits for any open transaction on the shared connection.
        await sql`pragma wal_checkpoint(TRUNCATE)`.execute(kysely);
      },
      close: once(() => kysely.destroy()),
    };
  }

  const { Pool, types, DatabaseError } = requireOptional('pg') as typeof import('pg');
  const queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  const pool = new Pool({
    connectionString: target.connectionString,
    max: options.poolSize ?? 10,
    // Bounded waits: when PostgreSQL is down or hangs, a request fails with 503 instead of hanging.
    connectionTimeoutMillis: 3000,
    // Sent at connection start: the server cancels any statement that runs longer (57014).
    statement_timeout: queryTimeoutMs,
    // The client's own bound, for a connection that does not answer at all (the server's timer
    // cannot fire for a statement that never reached it, nor its answer come back).
    query_timeout: queryTimeoutMs + CLIENT_TIMEOUT_GRACE_MS,
    idleTimeoutMillis: 30_000,
    ...(options.postgresSchema ? { options: `-c search_path=${options.postgresSchema}` } : {}),
    // BIGINT (epoch milliseconds) fits a JS number exactly; pg returns int8 as a string otherwise.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (value: string) => Number(value) : (types.getTypeParser(oid, format) as (value: string) => unknown)) as typeof types.getTypeParser,
    },
  });
  // An idle client that loses its server emits 'error' on the pool; without a listener that
  // would crash the process. The next query reports the outage (503) instead.
  pool.on('error', () => {});
  // A checked-out client has no pool listener (pg-pool removes it on checkout), so a connection
  // lost mid-transaction or mid-query emits 'error' on the client itself, and an unheard 'error'
  // is an uncaught exception: the process would crash on a network blip. The query in flight
  // still fails (503), the client is no longer queryable, and the pool discards it on release.
  pool.on('connect', (client) => client.on('error', () => {}));
  const kysely = new Kysely<Database>({ dialect: new CurrentSchemaPostgresDialect({ pool: replacingUnansweredClients(pool, DatabaseError) }) });
  return {
    kysely,
    dialect: 'postgres',
    postgresPool: pool,
    ping: () => within(PING_TIMEOUT_MS, sql`select 1`.execute(kysely)),
    scrubPurgedData: async () => {},
    close: once(() => kysely.destroy()),
  };
}

/**
 * The pool as Kysely sees it. node-postgres answers a query that outlives query_timeout with an
 * error but keeps the client as it is, its connection still waiting for that query's answer: put
 * back in the pool, it would hold every later query on it up to the timeout again. A client whose
 * query failed without an answer from the server (a time-out, a lost connection) is therefore
 * released with that error, which makes the pool destroy it and open a fresh one; until then its
 * further queries (Kysely's ROLLBACK) fail at once instead of waiting again. An error the server
 * sent (a constraint, a cancelled statement) leaves the connection in use.
 */
function replacingUnansweredClients(pool: pg.Pool, serverError: typeof pg.DatabaseError): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let unanswered: Error | undefined;
      const query = (text: string, parameters: readonly unknown[]): Promise<pg.QueryResult> => {
        if (unanswered !== undefined) return Promise.reject(unanswered);
        const name = preparedName(text);
        const result = name === undefined ? client.query(text, parameters as unknown[]) : client.query({ name, text, values: parameters as unknown[] });
        result.catch((error: unknown) => {
          if (!(error instanceof serverError)) unanswered ??= error instanceof Error ? error : new Error(String(error));
        });
        return result;
      };
      return { query: query as unknown as PostgresPoolClient['query'], release: () => client.release(unanswered) };
    },
    end: () => pool.end(),
  };
}

/** `work`, or a rejection once `ms` have passed without its answer (the work itself goes on). */
async function within(ms: number, work: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`the database did not answer within ${ms} ms`), { code: 'ETIMEDOUT' })), ms);
  });
  try {
    await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

function openSqliteFile(filename: string): SQLite.Database {
  try {
    if (filename !== ':memory:') {
      // A new database is created private (0600) before SQLite opens it: SQLite would create it
      // 0644, and it gives the WAL and shared-memory files it adds beside it the database file's
      // own mode, so those are private too. An existing file keeps its mode (the server warns).
      makePrivateDirectory(path.dirname(path.resolve(filename)));
      createPrivateFile(filename);
    }
    const connection = new SQLite(filename);
    connection.pragma('journal_mode = WAL');
    connection.pragma('synchronous = NORMAL');
    connection.pragma('foreign_keys = ON');
    connection.pragma('busy_timeout = 5000');
    // Overwrite deleted and updated-away content with zeros: a purged link must not linger in
    // free pages of the file (DESIGN §5, no usable secret at rest).
    connection.pragma('secure_delete = ON');
    return connection;
  } catch (error) {
    // SQLite's own message ("unable to open database file") names no file; an operator facing a
    // read-only or missing folder needs to know which one. The driver's code is kept.
    const { code, message } = error as { code?: string; message?: string };
    throw Object.assign(
      new Error(
        `cannot open the SQLite database ${path.resolve(filename)}: ${message ?? String(error)}. ` +
          'Its folder must exist and be writable (WAL mode keeps two more files beside it).',
        { cause: error },
      ),
      { code },
    );
  }
}

/**
 * On some errors SQLite ends the transaction itself: "SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY,
 * SQLITE_NOMEM ... might cause the transaction to be rolled back automatically"
 * (https://www.sqlite.org/lang_transaction.html). Kysely then sends ROLLBACK anyway, which fails
 * with "cannot rollback - no transaction is active", and that error replaces the real one: a
 * full disk (503) was answered 500. The rollback is skipped when no transaction is open.
 */
class RollbackTolerantSqliteDriver extends SqliteDriver {
  constructor(private readonly connection: SQLite.Database) {
    super({ database: withStatementCache(connection) });
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.connection.inTransaction) return;
    await super.rollbackTransaction(connection);
  }
}

class RollbackTolerantSqliteDialect extends SqliteDialect {
  constructor(private readonly connection: SQLite.Database) {
    super({ database: withStatementCache(connection) });
  }

  override createDriver(): Driver {
    return new RollbackTolerantSqliteDriver(this.connection);
  }
}

const STATEMENT_CACHE_SIZE = 200;

/**
 * Kysely prepares every query anew; with better-sqlite3, preparing costs more than running a
 * primary-key read (measured: the largest single cost of a session check). The queries are a
 * small fixed set, so prepared statements are kept and reused, bounded in number.
 */
function withStatementCache(connection: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => connection.close(),
    prepare(text) {
      let statement = statements.get(text);
      if (statement === undefined) {
        statement = connection.prepare(text);
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value as string);
        statements.set(text, statement);
      }
      return statement;
    },
  };
}

/** Closing twice (the server's shutdown and a test's cleanup) must not throw. */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | null = null;
  return () => (closing ??= close());
}

/** Kysely's migrator over our migrations, with its bookkeeping tables in the schema we use. */
async function migratorFor(db: Pick<DatabaseHandle, 'kysely' | 'dialect'>): Promise<Migrator> {
  // Kysely looks for its bookkeeping tables in every schema unless told which one: another
  // schema's kysely_migration (another app, another test run) would be taken for ours.
  const migrationTableSchema =
    db.dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely)).rows[0]?.schema : undefined;
  // (The migrator's table lookup goes through CurrentSchemaIntrospector above, so a schema
  // dropped meanwhile by someone else cannot fail it.)
  return new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => migrations },
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
}

/** The names of the migrations not yet applied, in order (`gatehouse doctor`). */
export async function pendingMigrations(db: DatabaseHandle): Promise<string[]> {
  const known = await (await migratorFor(db)).getMigrations();
  return known.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}

/**
 * How long one statement of a migration may run on PostgreSQL. DATABASE_QUERY_TIMEOUT bounds the
 * requests' statements (5 s by default); a migration may build an index over every row (020 on a
 * million users: 7 s on a busy machine), so it gets a bound of its own, still finite: a database
 * that stops answering fails the start rather than hanging it.
 */
export const MIGRATION_STATEMENT_TIMEOUT_MS = 10 * 60_000;

/** Applies every pending migration; throws with the failing migration's error. */
export async function migrateToLatest(db: DatabaseHandle): Promise<MigrationResultSet> {
  const own = db.postgresPool === null ? null : migrationConnection(db.postgresPool);
  try {
    const migrator = await migratorFor(own ?? db);
    const result = await migrator.migrateToLatest();
    if (result.error !== undefined) throw result.error instanceof Error ? result.error : new Error(String(result.error));
    return result;
  } finally {
    await own?.kysely.destroy();
  }
}

/** One connection like the pool's (server, schema, types), under the migrations' time bound. */
function migrationConnection(pool: pg.Pool): Pick<DatabaseHandle, 'kysely' | 'dialect'> {
  const { Pool } = requireOptional('pg') as typeof import('pg');
  const options = (pool as unknown as { options: pg.PoolConfig }).options;
  const own = new Pool({
    ...options,
    max: 1,
    statement_timeout: MIGRATION_STATEMENT_TIMEOUT_MS,
    query_timeout: MIGRATION_STATEMENT_TIMEOUT_MS + CLIENT_TIMEOUT_GRACE_MS,
  });
  own.on('error', () => {});
  return { kysely: new Kysely<Database>({ dialect: new CurrentSchemaPostgresDialect({ pool: own }) }), dialect: 'postgres' };
}
