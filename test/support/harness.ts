/**
 * Builds a real Gatehouse for a test: real bcrypt (at the lowest cost), a real database
 * (SQLite in memory, or a throwaway PostgreSQL schema), a clock the test moves.
 */
import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { describe } from 'vitest';
import { MockClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { createGatehouse, type Gatehouse, type GatehouseOptions } from '../../src/gatehouse.js';
import { createLogger } from '../../src/logger.js';
import { postgresUrl } from './services.js';

export type Dialect = 'sqlite' | 'postgres';

export const TEST_JWT_SECRET = 'test-jwt-secret-that-is-long-enough-0123456789';

export const dialects: Dialect[] = postgresUrl ? ['sqlite', 'postgres'] : ['sqlite'];

/** Runs the suite once per available dialect. */
export function describeEachDialect(name: string, suite: (dialect: Dialect) => void): void {
  for (const dialect of dialects) describe(`${name} [${dialect}]`, () => suite(dialect));
}

/**
 * A database of its own: SQLite in memory, or a fresh PostgreSQL schema dropped by `drop`.
 * `connectVia` (PostgreSQL only) is the URL the database handle connects through, e.g. a relay
 * a fault test can cut; the schema is still created and dropped directly.
 */
export async function openTestDatabase(
  dialect: Dialect,
  options: { connectVia?: string | undefined } = {},
): Promise<{ database: DatabaseHandle; drop(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const database = openDatabase({ kind: 'sqlite', filename: ':memory:' });
    return { database, drop: () => database.close() };
  }
  if (!postgresUrl) throw new Error('PostgreSQL is not available');
  const schema = `gh_test_${randomBytes(6).toString('hex')}`;
  const admin = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgresUrl, max: 1 }) }) });
  await sql`create schema ${sql.id(schema)}`.execute(admin);
  const database = openDatabase({ kind: 'postgres', connectionString: options.connectVia ?? postgresUrl }, { postgresSchema: schema, poolSize: 5 });
  return {
    database,
    async drop() {
      await database.close();
      await sql`drop schema ${sql.id(schema)} cascade`.execute(admin);
      await admin.destroy();
    },
  };
}

export interface SentEmail {
  to: string;
  subject: string;
  text: string;
  html?: string | null;
}

export interface TestGatehouse {
  gatehouse: Gatehouse;
  clock: MockClock;
  /** Emails the gatehouse handed to its sender (after `gatehouse.deliverQueuedEmails()`). */
  sentEmails: SentEmail[];
  /** The test's own database, for reading rows directly. */
  database: DatabaseHandle;
  /** Sends a request as a client at `ip` would; `json` sets the body and its Content-Type. */
  request(method: string, path: string, options?: RequestOptions): Promise<Response>;
  close(): Promise<void>;
}

export interface RequestOptions {
  json?: unknown;
  body?: string;
  headers?: Record<string, string>;
  cookie?: string;
  ip?: string;
}

export async function createTestGatehouse(
  dialect: Dialect,
  options: { env?: Record<string, string>; overrides?: GatehouseOptions; connectVia?: string } = {},
): Promise<TestGatehouse> {
  const config = loadConfig({
    JWT_SECRET: TEST_JWT_SECRET,
    BCRYPT_ROUNDS: '4',
    BASE_URL: 'http://localhost:3000',
    LOG_LEVEL: 'silent',
    ...options.env,
  });
  const clock = new MockClock(Date.UTC(2026, 10, 22, 12, 0, 0));
  const { database, drop } = await openTestDatabase(dialect, { connectVia: options.connectVia });
  const sentEmails: SentEmail[] = [];
  const gatehouse = await createGatehouse(config, {
    clock,
    database,
    logger: createLogger({ level: 'silent' }),
    mailer: { send: async (email) => void sentEmails.push(email) },
    ...options.overrides,
  });
  return {
    gatehouse,
    clock,
    sentEmails,
    database: options.overrides?.database ?? database,
    request(method, path, requestOptions = {}) {
      const headers = new Headers(requestOptions.headers);
      let body = requestOptions.body;
      if (requestOptions.json !== undefined) {
        body = JSON.stringify(requestOptions.json);
        if (!headers.has('content-type')) headers.set('content-type', 'application/json');
      }
      if (requestOptions.cookie) headers.set('cookie', requestOptions.cookie);
      return gatehouse.fetch(new Request(`http://localhost:3000${path}`, { method, headers, body }), {
        remoteAddress: requestOptions.ip ?? '203.0.113.10',
      });
    },
    async close() {
      // The gatehouse first (it disconnects its rate limit store), then the database.
      await gatehouse.close();
      await drop();
    },
  };
}

/** The `name=value` pair of a Set-Cookie header, ready to send back as a Cookie header. */
export function cookieFrom(response: Response, name: string): string | undefined {
  for (const header of response.headers.getSetCookie()) {
    const [pair] = header.split(';');
    if (pair?.startsWith(`${name}=`)) return pair;
  }
  return undefined;
}

export function setCookieHeader(response: Response, name: string): string | undefined {
  return response.headers.getSetCookie().find((header) => header.startsWith(`${name}=`));
}

export const STRONG_PASSWORD = 'Correct-Horse-9';
