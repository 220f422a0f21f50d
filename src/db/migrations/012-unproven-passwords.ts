/**
 * @module Passwords chosen before the address was proved (the account pre-hijacking defence,
 * docs/security.md): 1 while the account's password was set by whoever registered the address
 * before its owner proved it, and no browser signed in to the account has verified the address
 * since. The first sign-in by a proof of the mailbox removes such a password and everything set
 * up with it. Accounts registered before this migration and still unverified start at 1; the
 * verified ones at 0 (their owners proved the address when the rule did not exist yet).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('password_unproven', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
  await sql`update users set password_unproven = 1 where password_hash is not null and email_verified = 0`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('password_unproven').execute();
}
