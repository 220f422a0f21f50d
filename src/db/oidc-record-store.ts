/** @module OidcRecordStore over Kysely: the OpenID Connect engine's records (018-oidc-provider.ts). */
import type { Kysely } from 'kysely';
import type { OidcGrantRow, OidcRecordStore, StoredOidcRecord } from '../oidc-provider/store.js';
import type { Database } from './schema.js';

/** Rows deleted per statement by the sweep: a long delete would hold its locks for as long. */
const SWEEP_BATCH = 1_000;

function stored(row: { id: string; payload: string; consumed_at: number | string | null } | undefined): StoredOidcRecord | null {
  if (row === undefined) return null;
  return { idHash: row.id, sealedPayload: row.payload, consumedAt: row.consumed_at === null ? null : new Date(Number(row.consumed_at)) };
}

export function createOidcRecordStore(db: Kysely<Database>): OidcRecordStore {
  const live = (now: Date) =>
    db
      .selectFrom('oidc_records')
      .select(['id', 'payload', 'consumed_at'])
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now.getTime())]));
  return {
    async upsertRecord(record) {
      const values = {
        payload: record.sealedPayload,
        grant_id: record.grantId,
        user_code: record.userCodeHash,
        uid: record.uidHash,
        account_id: record.accountId,
        client_id: record.clientId,
        expires_at: record.expiresAt?.getTime() ?? null,
      };
      await db
        .insertInto('oidc_records')
        .values({ model: record.model, id: record.idHash, consumed_at: null, ...values })
        .onConflict((oc) => oc.columns(['model', 'id']).doUpdateSet(values))
        .execute();
    },

    findRecord: async (model, idHash, now) => stored(await live(now).where('model', '=', model).where('id', '=', idHash).executeTakeFirst()),
    findRecordByUid: async (model, uidHash, now) => stored(await live(now).where('model', '=', model).where('uid', '=', uidHash).executeTakeFirst()),
    findRecordByUserCode: async (model, userCodeHash, now) =>
      stored(await live(now).where('model', '=', model).where('user_code', '=', userCodeHash).executeTakeFirst()),

    async consumeRecord(model, idHash, now) {
      await db.updateTable('oidc_records').set({ consumed_at: now.getTime() }).where('model', '=', model).where('id', '=', idHash).execute();
    },

    async destroyRecord(model, idHash) {
      await db.deleteFrom('oidc_records').where('model', '=', model).where('id', '=', idHash).execute();
    },

    async revokeGrant(grantId) {
      const result = await db.deleteFrom('oidc_records').where('grant_id', '=', grantId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    listGrantsOfAccount: (accountId, now) => listGrantsOfAccount(db, accountId, now),

    revokeAccount: (accountId) => revokeAppAccess(db, accountId),

    async sweepExpiredRecords(now) {
      let total = 0;
      for (;;) {
        const batch = await db.selectFrom('oidc_records').select(['model', 'id']).where('expires_at', '<=', now.getTime()).limit(SWEEP_BATCH).execute();
        if (batch.length === 0) return total;
        for (const model of new Set(batch.map((row) => row.model))) {
          const ids = batch.filter((row) => row.model === model).map((row) => row.id);
          await db.deleteFrom('oidc_records').where('model', '=', model).where('id', 'in', ids).execute();
        }
        total += batch.length;
        if (batch.length < SWEEP_BATCH) return total;
      }
    },
  };
}

async function listGrantsOfAccount(db: Kysely<Database>, accountId: string, now: Date): Promise<OidcGrantRow[]> {
  const rows = await db
    .selectFrom('oidc_records')
    .select(['model', 'id', 'grant_id', 'client_id', 'payload', 'expires_at'])
    .where('account_id', '=', accountId)
    .where('model', '=', 'Grant')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now.getTime())]))
    .orderBy('expires_at')
    .execute();
  return rows.flatMap((row) =>
    row.grant_id === null || row.client_id === null
      ? []
      : [
          {
            grantId: row.grant_id,
            clientId: row.client_id,
            sealedPayload: row.payload,
            model: row.model,
            idHash: row.id,
            expiresAt: row.expires_at === null ? null : new Date(Number(row.expires_at)),
          },
        ],
  );
}

/**
 * Every record of the account's grants (codes and tokens, whoever holds them), then every record
 * naming the account (grants, engine sessions). Two statements and no transaction of its own: the
 * flows call it inside theirs (disable, reset, deletion), and alone each delete is safe to repeat.
 */
export async function revokeAppAccess(db: Kysely<Database>, accountId: string): Promise<number> {
  const grantIds = db.selectFrom('oidc_records').select('grant_id').where('account_id', '=', accountId).where('grant_id', 'is not', null);
  const byGrant = await db.deleteFrom('oidc_records').where('grant_id', 'in', grantIds).executeTakeFirst();
  const byAccount = await db.deleteFrom('oidc_records').where('account_id', '=', accountId).executeTakeFirst();
  return Number(byGrant.numDeletedRows) + Number(byAccount.numDeletedRows);
}
