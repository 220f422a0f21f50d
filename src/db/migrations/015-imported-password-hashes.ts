/**
 * @module Room for password hashes brought in from other systems: an argon2 hash alone is about
 * 100 characters, a Firebase scrypt one with its parameters about 230, and `password_hash` was
 * sized for bcrypt's 60. SQLite never enforced the length; PostgreSQL's column becomes text.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) await sql`alter table users alter column password_hash type text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) await sql`alter table users alter column password_hash type varchar(100)`.execute(db);
}
