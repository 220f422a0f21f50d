/**
 * The operators' user search by substring or id (src/db/admin-store.ts) on every available
 * database: whichever way a search finds its rows — PostgreSQL's trigram index or the planner's
 * walk, SQLite's FTS5 candidates, the walk of the list's order then one scan — it answers exactly
 * what one `LIKE '%term%' ESCAPE '\' OR id = term` over every user answers, page by page.
 * Migration 020 builds its indexes over users already there, keeps an index an operator built
 * beforehand, and refuses a broken one; SQLite's search table follows every change to users.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterEach, beforeEach, expect, test } from 'vitest';
import type { AdminStore, UserCursor } from '../src/admin/store.js';
import { createAdminStore } from '../src/db/admin-store.js';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../src/db/connect.js';
import type { Database } from '../src/db/schema.js';
import { createTestGatehouse, describeEachDialect, openTestDatabase } from './support/harness.js';
import { migrateToBefore } from './support/migrations.js';
import { postgresUrl } from './support/services.js';

const KEY = 'admin-key-for-tests-0123456789-abcdefghij';
const T0 = Date.UTC(2026, 0, 1);
const THIS_MIGRATION = '020-user-search-index';

interface Seeded {
  id: string;
  email: string | null;
  createdAt: number;
}

/** Users of every kind a search must tell apart: wildcards and the escape character in addresses, non-ASCII, no address, equal creation times. */
function people(): Seeded[] {
  const emails: (string | null)[] = [
    'ana@example.com',
    'anabel@example.com',
    'a_b@example.org',
    'axb@example.org',
    'a%b@example.org',
    'a\\b@example.net',
    'zoë@example.de',
    'ünïcode@例え.jp',
    'bob.smith@corp.example',
    null,
    null,
    ...Array.from({ length: 14 }, (_, i) => `user-${i}@bulk.example`),
  ];
  // Three at each instant: the id breaks the tie, across a page's edge too.
  return emails.map((email, i) => ({ id: randomUUID(), email, createdAt: T0 + Math.floor(i / 3) * 1000 }));
}

/** The emails of `rows`, oldest first and by id among equals: the list's order. */
function inListOrder(seeded: Seeded[], emails: (string | null)[]): (string | null)[] {
  const rows = emails.map((email) => seeded.find((row) => row.email === email)!);
  return rows.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)).map((row) => row.email);
}

async function insertPeople(db: Kysely<Database>, rows: Seeded[]): Promise<void> {
  await db
    .insertInto('users')
    .values(
      rows.map((row) => ({
        id: row.id,
        email: row.email,
        password_hash: null,
        email_verified: 0,
        preferences: '{}',
        created_at: row.createdAt,
        last_login_at: null,
        disabled_at: null,
        password_unproven: 0,
        external_id: null,
        language: null,
      })),
    )
    .execute();
}

/** The search as it was written before any index: every user read, LIKE or id, sorted. */
async function reference(db: Kysely<Database>, query: string | null, limit: number, after: UserCursor | null): Promise<string[]> {
  let select = db.selectFrom('users').select('id');
  if (query !== null) {
    const pattern = `%${query.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
    select = select.where((eb) => eb.or([sql<boolean>`${eb.ref('email')} like ${pattern} escape '\\'`, eb('id', '=', query)]));
  }
  if (after !== null) {
    select = select.where((eb) => eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)])]));
  }
  const rows = await select
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit + 1)
    .execute();
  return rows.map((row) => row.id);
}

/** Every page of `query` from `store`, each checked against the reference at the same cursor; the ids of all pages. */
async function everyPage(db: Kysely<Database>, store: AdminStore, query: string | null, limit: number): Promise<string[]> {
  const seen: string[] = [];
  let after: UserCursor | null = null;
  for (;;) {
    const rows = await store.searchUsers({ query, limit, after });
    expect(
      rows.map((user) => user.id),
      `${query} limit ${limit} after ${JSON.stringify(after)}`,
    ).toEqual(await reference(db, query, limit, after));
    const page = rows.slice(0, limit);
    seen.push(...page.map((user) => user.id));
    const last = page.at(-1);
    if (rows.length <= limit || last === undefined) return seen;
    after = { createdAt: last.createdAt.getTime(), id: last.id };
  }
}

describeEachDialect('admin user search', (dialect) => {
  let database: DatabaseHandle;
  let drop: () => Promise<void>;
  beforeEach(async () => {
    ({ database, drop } = await openTestDatabase(dialect));
  });
  afterEach(async () => {
    await drop();
  });

  test('every path gives the answers of one LIKE-or-id scan: wildcards as plain characters, 1–2 character terms, the id, ties, every page', async () => {
    await migrateToLatest(database);
    const db = database.kysely;
    const seeded = people();
    await insertPeople(db, seeded);
    const nameless = seeded.find((row) => row.email === null)!;
    // The default store, and stores that walk only a few rows and take only a few SQLite candidates, so that
    // the walk, the scan after it and both sides of the candidate cap are each reached by these few users.
    const stores = [createAdminStore(db), createAdminStore(db, { walkRows: 1, candidateCap: 1 }), createAdminStore(db, { walkRows: 4, candidateCap: 3 })];
    const queries = [
      ...['ana', 'an', 'a', 'a_b', 'a%b', 'a_b@ex', 'a%b@ex', '%', '_', '\\', 'a\\b', '_b@', 'example', 'example.org', 'bulk', 'user-1', 'ser', '-1', '@'],
      ...['zoë', 'ë', 'ünï', '例え', 'nothing-like-this', nameless.id, nameless.id.slice(0, 8), null],
    ];
    for (const store of stores) {
      for (const query of queries) {
        for (const limit of [1, 2, 5, 100]) await everyPage(db, store, query, limit);
      }
    }
    // The reference itself, held to what an operator expects.
    const emailsOf = async (query: string) => {
      const ids = await everyPage(db, stores[1]!, query, 2);
      return ids.map((id) => seeded.find((row) => row.id === id)!.email);
    };
    expect(await emailsOf('a_b')).toEqual(['a_b@example.org']);
    expect(await emailsOf('a%b')).toEqual(['a%b@example.org']);
    expect(await emailsOf('a\\b')).toEqual(['a\\b@example.net']);
    expect(await emailsOf('ë')).toEqual(['zoë@example.de']);
    expect(await emailsOf(nameless.id)).toEqual([null]);
    expect(await emailsOf(nameless.id.slice(0, 8))).toEqual([]);
    expect(await emailsOf('user-1')).toEqual(
      inListOrder(seeded, ['user-1@bulk.example', 'user-10@bulk.example', 'user-11@bulk.example', 'user-12@bulk.example', 'user-13@bulk.example']),
    );
    expect(await everyPage(db, stores[2]!, null, 3)).toEqual(
      [...seeded].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)).map((row) => row.id),
    );
  });

  test('the search follows changes to users: a new address, a changed one, a removed user', async () => {
    await migrateToLatest(database);
    const db = database.kysely;
    const seeded = people();
    await insertPeople(db, seeded);
    const store = createAdminStore(db);
    const ids = async (query: string) => (await store.searchUsers({ query, limit: 50, after: null })).map((user) => user.id);
    const [ana, anabel] = seeded;
    await db.updateTable('users').set({ email: 'renamed@example.com' }).where('id', '=', ana!.id).execute();
    expect(await ids('ana@')).toEqual([]);
    expect(await ids('renamed@')).toEqual([ana!.id]);
    await db.deleteFrom('users').where('id', '=', anabel!.id).execute();
    expect(await ids('anabel')).toEqual([]);
    const nameless = seeded.find((row) => row.email === null)!;
    await db.updateTable('users').set({ email: 'late@example.com' }).where('id', '=', nameless.id).execute();
    expect(await ids('late@')).toEqual([nameless.id]);
    await db.updateTable('users').set({ email: null }).where('id', '=', seeded[2]!.id).execute();
    expect(await ids('a_b')).toEqual([]);
    if (dialect === 'sqlite') {
      // The search table holds exactly each user's address, once.
      const indexed = await sql<{ email: string; user_id: string }>`select email, user_id from users_email_search order by user_id`.execute(db);
      const users = await db.selectFrom('users').select(['email', 'id as user_id']).where('email', 'is not', null).orderBy('id').execute();
      expect(indexed.rows).toEqual(users);
    }
  });

  test('migration 020 on a database that already has users: built over them, and the search finds them', async () => {
    await migrateToBefore(database, THIS_MIGRATION);
    const seeded = people();
    await insertPeople(database.kysely, seeded);
    const { results = [] } = await migrateToLatest(database);
    expect(results.map((result) => [result.migrationName, result.status])).toContainEqual([THIS_MIGRATION, 'Success']);
    const store = createAdminStore(database.kysely);
    expect((await store.searchUsers({ query: 'bob.smith', limit: 50, after: null })).map((user) => user.id)).toEqual([seeded[8]!.id]);
    await everyPage(database.kysely, store, 'bulk', 5);
    if (dialect === 'postgres') {
      const { rows } = await sql<{ indexname: string; indexdef: string }>`
        select indexname, indexdef from pg_indexes where schemaname = current_schema() and tablename = 'users' order by indexname`.execute(database.kysely);
      expect(rows.find((row) => row.indexname === 'users_email_trgm_idx')?.indexdef).toMatch(/USING gin \(email \w+\.gin_trgm_ops\)/);
      expect(rows.find((row) => row.indexname === 'users_created_at_id_idx')?.indexdef).toMatch(/\(created_at, id\)/);
    }
  });

  if (dialect === 'postgres') {
    test('PostgreSQL: an index built beforehand with CREATE INDEX CONCURRENTLY is kept; an invalid one stops the migration, named', async () => {
      await migrateToBefore(database, THIS_MIGRATION);
      const db = database.kysely;
      // As an operator would, before upgrading (docs/upgrading.md). A race with another run creating it is harmless.
      await sql`create extension if not exists pg_trgm with schema public`.execute(db).catch(() => undefined);
      const { rows } = await sql<{ schema: string }>`
        select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
      await sql`create index concurrently users_email_trgm_idx on users using gin (email ${sql.id(rows[0]!.schema, 'gin_trgm_ops')})`.execute(db);
      const oid = async () => (await sql<{ oid: number }>`select 'users_email_trgm_idx'::regclass::oid as oid`.execute(db)).rows[0]?.oid;
      const before = await oid();
      await migrateToLatest(database);
      expect(await oid()).toBe(before);

      const other = await openTestDatabase(dialect);
      try {
        await migrateToBefore(other.database, THIS_MIGRATION);
        await insertPeople(other.database.kysely, [
          { id: randomUUID(), email: 'one@example.com', createdAt: T0 },
          { id: randomUUID(), email: 'two@example.com', createdAt: T0 },
        ]);
        // A concurrent build that failed (here: a unique index over equal values) leaves its index behind, invalid.
        await expect(sql`create unique index concurrently users_created_at_id_idx on users (created_at)`.execute(other.database.kysely)).rejects.toThrow();
        await expect(migrateToLatest(other.database)).rejects.toThrow(
          /users_created_at_id_idx exists but is not valid.*DROP INDEX CONCURRENTLY users_created_at_id_idx/,
        );
        await sql`drop index concurrently users_created_at_id_idx`.execute(other.database.kysely);
        await migrateToLatest(other.database);
      } finally {
        await other.drop();
      }
    });
  }

  if (dialect === 'postgres') {
    test('PostgreSQL: a role that may not create pg_trgm gets an error that says so and how to install it, and nothing is applied', async () => {
      // A database of its own, where pg_trgm is not installed, and a role that owns only its schema there.
      const suffix = randomBytes(4).toString('hex');
      const [name, role] = [`gh_test_noext_${suffix}`, `gh_test_role_${suffix}`];
      const admin = new pg.Client({ connectionString: postgresUrl! });
      await admin.connect();
      try {
        await admin.query(`create role ${role} login password 'no-extension-for-me'`);
        await admin.query(`create database ${name}`);
        const url = new URL(postgresUrl!);
        url.pathname = `/${name}`;
        const owner = new pg.Client({ connectionString: url.toString() });
        await owner.connect();
        await owner.query(`create schema gatehouse authorization ${role}`).finally(() => owner.end());
        Object.assign(url, { username: role, password: 'no-extension-for-me' });
        url.searchParams.set('options', '-c search_path=gatehouse');
        const limited = openDatabase({ kind: 'postgres', connectionString: url.toString() }, { poolSize: 1 });
        try {
          await expect(migrateToLatest(limited)).rejects.toThrow(
            new RegExp(`020-user-search-index needs the PostgreSQL extension pg_trgm .*permission denied.*psql -d ${name} -c 'CREATE EXTENSION pg_trgm'`),
          );
          // The migrator applies pending migrations in one transaction: none of them is recorded.
          expect((await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(limited.kysely)).rows[0]?.n).toBe(0);
        } finally {
          await limited.close();
        }
      } finally {
        await admin.query(`drop database if exists ${name} with (force)`);
        await admin.query(`drop role if exists ${role}`);
        await admin.end();
      }
    });
  }

  test('through the admin API: a 1–2 character term, wildcards, the id, pages by cursor', async () => {
    const t = await createTestGatehouse(dialect, { env: { ADMIN_API_KEY: KEY, RATE_LIMIT_ADMIN: '1000/1m' } });
    try {
      const seeded = people();
      await insertPeople(t.database.kysely, seeded);
      const list = async (query: string, limit: number) => {
        const ids: string[] = [];
        let cursor: string | null = null;
        do {
          const response = await t.request('GET', `/api/admin/users?query=${encodeURIComponent(query)}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, {
            headers: { authorization: `Bearer ${KEY}` },
          });
          expect(response.status).toBe(200);
          const body = (await response.json()) as { users: { id: string }[]; nextCursor: string | null };
          ids.push(...body.users.map((user) => user.id));
          cursor = body.nextCursor;
        } while (cursor !== null);
        return ids;
      };
      const emailOf = (id: string) => seeded.find((row) => row.id === id)!.email;
      expect((await list('A_B', 1)).map(emailOf)).toEqual(['a_b@example.org']);
      expect((await list('%', 1)).map(emailOf)).toEqual(['a%b@example.org']);
      expect((await list('an', 1)).map(emailOf)).toEqual(inListOrder(seeded, ['ana@example.com', 'anabel@example.com']));
      expect((await list('-1', 2)).map(emailOf)).toEqual(
        inListOrder(seeded, ['user-1@bulk.example', 'user-10@bulk.example', 'user-11@bulk.example', 'user-12@bulk.example', 'user-13@bulk.example']),
      );
      expect((await list('bulk', 4)).map(emailOf)).toEqual(
        inListOrder(
          seeded,
          Array.from({ length: 14 }, (_, i) => `user-${i}@bulk.example`),
        ),
      );
      expect(await list(seeded[9]!.id.toUpperCase(), 5)).toEqual([seeded[9]!.id]);
    } finally {
      await t.close();
    }
  });
});
