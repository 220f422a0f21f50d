/**
 * @module Indexes for the operators' user search (`GET /api/admin/users?query=`, `gatehouse users`),
 * which matches a substring of the email (`LIKE '%term%'`) or the id, oldest first.
 *
 * - Both databases: `users_created_at_id_idx` on `(created_at, id)`, the list's order, so a page
 *   is a walk of the index from the cursor instead of a sort of every user.
 * - PostgreSQL: `users_email_trgm_idx`, a GIN trigram index (the `pg_trgm` extension) on the email,
 *   which `LIKE '%term%'` uses when the term holds a trigram. The extension is used where it is
 *   already installed (any schema); otherwise it is created in `public`, so that it outlives any
 *   one schema (dropping a schema drops the extensions in it, and with them the indexes of every
 *   other schema that used them). A role that may not create it stops the migration with a
 *   message that says how to install it. The indexes are created in the migration's transaction
 *   (writes to `users` wait while they build); either can be built beforehand with `CREATE INDEX
 *   CONCURRENTLY` under the same name, and the migration then keeps it (docs/upgrading.md).
 * - SQLite: `users_email_search`, an FTS5 table with the `trigram` tokenizer holding each user's
 *   email and id, kept by triggers on `users`. It narrows a search down to candidate ids; the
 *   answer is still decided by the same LIKE on `users` (src/db/admin-store.ts). A row is found
 *   again for its removal by its old email (trigram LIKE, so `_` and `%` in it may match more)
 *   and its id, never by a rowid: VACUUM may renumber the rowids of `users`.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { refuseInvalidIndexes } from './postgres-indexes.js';

const TRIGRAM_INDEX = 'users_email_trgm_idx';
const ORDER_INDEX = 'users_created_at_id_idx';

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) await upPostgres(db);
  else await upSqlite(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) {
    for (const event of ['insert', 'update', 'delete']) await sql`drop trigger if exists ${sql.id(`users_email_search_${event}`)}`.execute(db);
    await sql`drop table if exists users_email_search`.execute(db);
  }
  // The extension stays: other tables or schemas may use it, and dropping it may need a superuser.
  await db.schema.dropIndex(TRIGRAM_INDEX).ifExists().execute();
  await db.schema.dropIndex(ORDER_INDEX).ifExists().execute();
}

async function upPostgres(db: Kysely<unknown>): Promise<void> {
  const trgmSchema = await installedTrigramSchema(db);
  await refuseInvalidIndexes(db, '020-user-search-index', [TRIGRAM_INDEX, ORDER_INDEX]);
  await sql`create index if not exists ${sql.id(ORDER_INDEX)} on users (created_at, id)`.execute(db);
  await sql`create index if not exists ${sql.id(TRIGRAM_INDEX)} on users using gin (email ${sql.id(trgmSchema, 'gin_trgm_ops')})`.execute(db);
}

/** The schema pg_trgm lives in, creating it in `public` when the database has none. */
async function installedTrigramSchema(db: Kysely<unknown>): Promise<string> {
  const installed = async () =>
    (
      await sql<{ schema: string }>`
        select n.nspname as schema from pg_catalog.pg_extension e join pg_catalog.pg_namespace n on n.oid = e.extnamespace
        where e.extname = 'pg_trgm'`.execute(db)
    ).rows[0]?.schema;
  const found = await installed();
  if (found !== undefined) return found;
  // Read before: after a failed statement the transaction answers nothing more.
  const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(db);
  try {
    await sql`create extension if not exists pg_trgm with schema public`.execute(db);
  } catch (error) {
    throw new Error(
      `migration 020-user-search-index needs the PostgreSQL extension pg_trgm (a trigram index for the admin user search), ` +
        `and it could not be created: ${(error as Error).message}. ` +
        `Create it once as a superuser or the database's owner (on PostgreSQL 13 and later pg_trgm is a trusted extension: ` +
        `any role with CREATE on the database may create it): psql -d ${rows[0]?.name ?? '<database>'} -c 'CREATE EXTENSION pg_trgm' ` +
        `(in any schema; where the extension is missing altogether, the postgresql-contrib package provides it), then run gatehouse migrate again.`,
      { cause: error },
    );
  }
  return (await installed()) ?? 'public';
}

async function upSqlite(db: Kysely<unknown>): Promise<void> {
  // Kysely runs SQLite's migrations outside a transaction: this one is all or nothing.
  await db.transaction().execute(async (trx) => {
    await sql`create index ${sql.id(ORDER_INDEX)} on users (created_at, id)`.execute(trx);
    // detail=none: a search asks only which rows hold every trigram of the term (FTS5 checks the
    // LIKE against its own copy of the email), never where; the table is about a third smaller.
    await sql`create virtual table users_email_search using fts5(email, user_id unindexed, tokenize = 'trigram', detail = 'none')`.execute(trx);
    await sql`create trigger users_email_search_insert after insert on users when new.email is not null begin
        insert into users_email_search (email, user_id) values (new.email, new.id);
      end`.execute(trx);
    await sql`create trigger users_email_search_delete after delete on users when old.email is not null begin
        delete from users_email_search where rowid in (select rowid from users_email_search where email like old.email and user_id = old.id);
      end`.execute(trx);
    await sql`create trigger users_email_search_update after update of email, id on users
      when old.email is not new.email or old.id is not new.id begin
        delete from users_email_search where rowid in (select rowid from users_email_search where email like old.email and user_id = old.id);
        insert into users_email_search (email, user_id) select new.email, new.id where new.email is not null;
      end`.execute(trx);
    await sql`insert into users_email_search (email, user_id) select email, id from users where email is not null`.execute(trx);
  });
}
