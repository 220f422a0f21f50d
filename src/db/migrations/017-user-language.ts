/**
 * @module The account's language (one of src/i18n/languages.ts): the language of its emails.
 * Remembered from the page it signed up or signed in on; null: none known, DEFAULT_LANGUAGE is used.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('language', 'varchar(16)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('language').execute();
}
