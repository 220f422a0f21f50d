/**
 * @module Outbox delivery: an HTML body, and a claim (id + lease) so that several senders on one
 * database never send the same email twice, while a sender that dies mid-send releases its
 * claim when the lease runs out.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('email_outbox').addColumn('body_html', 'text').execute();
  await db.schema.alterTable('email_outbox').addColumn('claim_id', 'varchar(36)').execute();
  await db.schema.alterTable('email_outbox').addColumn('locked_until', 'bigint').execute();
  await db.schema.createIndex('email_outbox_claim_id_idx').on('email_outbox').column('claim_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('email_outbox_claim_id_idx').execute();
  await db.schema.alterTable('email_outbox').dropColumn('locked_until').execute();
  await db.schema.alterTable('email_outbox').dropColumn('claim_id').execute();
  await db.schema.alterTable('email_outbox').dropColumn('body_html').execute();
}
