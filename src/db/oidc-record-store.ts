/** @module OidcRecordStore over Kysely: the OpenID Connect engine's records (018-oidc-provider.ts). */
import { CompiledQuery, type Kysely } from 'kysely';
import type { OidcGrantRow, OidcRecordStore, StoredOidcRecord } from '../oidc-provider/store.js';
import type { Database } from './schema.js';

/** Rows deleted per statement by the sweep: a long delete would hold its locks for as long. */
const SWEEP_BATCH = 1_000;

function stored(row: { id: string; payload: string; consumed_at: number | string | null } | undefined): StoredOidcRecord | null {
  if (row === undefined) return null;
  return { idHash: row.id, sealedPayload: row.payload, consumedAt: row.consumed_at === null ? null : new Date(Number(row.consumed_at)) };
}

/** The upsert's columns, in the order of its parameters (an update keeps `consumed_at`). */
const UPSERT_COLUMNS = ['model', 'id', 'payload', 'grant_id', 'user_code', 'uid', 'account_id', 'client_id', 'expires_at', 'consumed_at', 'scope'] as const;

/**
 * Every token the engine issues is one upsert, and every token it checks one lookup by id: both
 * are built and compiled once, and run with their parameters only (as the session check's query).
 */
function compiledStatements(db: Kysely<Database>): { upsertSql: string; findSql: string } {
  const placeholders = Object.fromEntries(UPSERT_COLUMNS.map((column) => [column, null])) as never;
  const upsertSql = db
    .insertInto('oidc_records')
    .values(placeholders)
    .onConflict((oc) =>
      oc.columns(['model', 'id']).doUpdateSet((eb) => ({
        payload: eb.ref('excluded.payload'),
        grant_id: eb.ref('excluded.grant_id'),
        user_code: eb.ref('excluded.user_code'),
        uid: eb.ref('excluded.uid'),
        account_id: eb.ref('excluded.account_id'),
        client_id: eb.ref('excluded.client_id'),
        expires_at: eb.ref('excluded.expires_at'),
        scope: eb.ref('excluded.scope'),
      })),
    )
    .compile().sql;
  const findSql = db
    .selectFrom('oidc_records')
    .select(['id', 'payload', 'consumed_at'])
    .where('model', '=', '')
    .where('id', '=', '')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', 0)]))
    .compile().sql;
  return { upsertSql, findSql };
}

export function createOidcRecordStore(db: Kysely<Database>): OidcRecordStore {
  const live = (now: Date) =>
    db
      .selectFrom('oidc_records')
      .select(['id', 'payload', 'consumed_at'])
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now.getTime())]));
  const { upsertSql, findSql } = compiledStatements(db);
  return {
    async upsertRecord(record) {
      const params = [
        record.model,
        record.idHash,
        record.sealedPayload,
        record.grantId,
        record.userCodeHash,
        record.uidHash,
        record.accountId,
        record.clientId,
        record.expiresAt?.getTime() ?? null,
        null,
        record.scope,
      ];
      await db.executeQuery(CompiledQuery.raw(upsertSql, params));
    },

    async findRecord(model, idHash, now) {
      const { rows } = await db.executeQuery<{ id: string; payload: string; consumed_at: number | string | null }>(
        CompiledQuery.raw(findSql, [model, idHash, now.getTime()]),
      );
      return stored(rows[0]);
    },
    findRecordByUid: async (model, uidHash, now) => stored(await live(now).where('model', '=', model).where('uid', '=', uidHash).executeTakeFirst()),
    findRecordByUserCode: async (model, userCodeHash, now) =>
      stored(await live(now).where('model', '=', model).where('user_code', '=', userCodeHash).executeTakeFirst()),

    async consumeRecord(model, idHash, now) {
      // Only the first use counts: a refresh grace measured from it cannot slide, and of two
      // redemptions racing, exactly one consumes.
      const result = await db
        .updateTable('oidc_records')
        .set({ consumed_at: now.getTime() })
        .where('model', '=', model)
        .where('id', '=', idHash)
        .where('consumed_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async destroyRecord(model, idHash) {
      await db.deleteFrom('oidc_records').where('model', '=', model).where('id', '=', idHash).execute();
    },

    async revokeGrant(grantId) {
      const result = await db.deleteFrom('oidc_records').where('grant_id', '=', grantId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    listGrantsOfAccount: (accountId, now) => listGrantsOfAccount(db, accountId, now),

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
 * A grant whose scopes include `scope`, and with it every code and token issued under it, for one
 * account (a member removed from an organization loses the grants whose tokens named it).
 */
export async function revokeGrantsWithScope(db: Kysely<Database>, accountId: string, scope: string): Promise<number> {
  const grants = await db
    .selectFrom('oidc_records')
    .select('grant_id')
    .where('account_id', '=', accountId)
    .where('model', '=', 'Grant')
    .where('scope', 'like', `% ${scope} %`)
    .execute();
  const grantIds = grants.flatMap((row) => (row.grant_id === null ? [] : [row.grant_id]));
  if (grantIds.length > 0) await db.deleteFrom('oidc_records').where('grant_id', 'in', grantIds).execute();
  return grantIds.length;
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
