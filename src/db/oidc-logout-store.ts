/**
 * @module Back-channel logouts owed to clients (018-oidc-provider.ts): queued in the transaction
 * that ends a person's sessions or access, claimed and recorded by the provider's logout worker.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { LogoutNoticeStore } from '../oidc-provider/store.js';
import type { Database } from './schema.js';

/**
 * A notice for every client that holds a grant of the account and registered a back-channel
 * logout URI, unless one is already pending for it (a reset that both ends sessions and revokes
 * grants sends one). Called before the grants are revoked: they say who is owed.
 */
export async function enqueueLogoutNotices(db: Kysely<Database>, accountId: string, now: Date): Promise<number> {
  const rows = await db
    .selectFrom('oidc_records')
    .innerJoin('oidc_clients', 'oidc_clients.client_id', 'oidc_records.client_id')
    .select(['oidc_clients.client_id', 'oidc_clients.registration'])
    .distinct()
    .where('oidc_records.account_id', '=', accountId)
    .where('oidc_records.model', '=', 'Grant')
    .execute();
  let queued = 0;
  for (const row of rows) {
    const { backchannelLogoutUri } = JSON.parse(row.registration) as { backchannelLogoutUri?: string | null };
    if (typeof backchannelLogoutUri !== 'string') continue;
    const pending = await db
      .selectFrom('oidc_logout_notices')
      .select('id')
      .where('client_id', '=', row.client_id)
      .where('account_id', '=', accountId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (pending !== undefined) continue;
    await db
      .insertInto('oidc_logout_notices')
      .values({
        id: randomUUID(),
        client_id: row.client_id,
        account_id: accountId,
        status: 'pending',
        next_attempt_at: now.getTime(),
        locked_until: null,
        last_error: null,
        created_at: now.getTime(),
      })
      .execute();
    queued += 1;
  }
  return queued;
}

export function createLogoutNoticeStore(db: Kysely<Database>): LogoutNoticeStore {
  return {
    async claimDueNotices(now, limit, leaseMs) {
      const candidates = await db
        .selectFrom('oidc_logout_notices')
        .select(['id', 'client_id', 'account_id', 'attempts'])
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', now.getTime())
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now.getTime())]))
        .orderBy('next_attempt_at')
        .limit(limit)
        .execute();
      const claimed = [];
      for (const row of candidates) {
        // Another worker may have taken it since the read: the conditional update decides.
        const result = await db
          .updateTable('oidc_logout_notices')
          .set({ locked_until: now.getTime() + leaseMs })
          .where('id', '=', row.id)
          .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now.getTime())]))
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) === 1)
          claimed.push({ id: row.id, clientId: row.client_id, accountId: row.account_id, attempts: Number(row.attempts) });
      }
      return claimed;
    },

    async recordNoticeAttempt(id, outcome) {
      await db
        .updateTable('oidc_logout_notices')
        .set((eb) => ({
          status: outcome.status,
          attempts: eb('attempts', '+', 1),
          next_attempt_at: outcome.nextAttemptAt.getTime(),
          locked_until: null,
          last_error: outcome.error,
        }))
        .where('id', '=', id)
        .execute();
    },

    async sweepNotices(before) {
      const result = await db.deleteFrom('oidc_logout_notices').where('status', '!=', 'pending').where('created_at', '<', before.getTime()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
