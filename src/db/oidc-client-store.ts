/** @module OidcClientStore over Kysely: registered OpenID Connect clients (018-oidc-provider.ts). */
import { CompiledQuery, type Kysely, type Selectable } from 'kysely';
import type { OidcClient, OidcClientStore } from '../oidc-provider/store.js';
import type { Database, OidcClientsTable } from './schema.js';

/** What the registration column holds: everything but the id, name, secret and dates. */
type Registration = Omit<OidcClient, 'clientId' | 'name' | 'createdAt' | 'updatedAt'>;

function toClient(row: Selectable<OidcClientsTable>): OidcClient {
  const registration = JSON.parse(row.registration) as Registration;
  return {
    clientId: row.client_id,
    name: row.name,
    ...registration,
    createdAt: new Date(Number(row.created_at)),
    updatedAt: new Date(Number(row.updated_at)),
  };
}

function registrationOf(client: OidcClient): string {
  const { clientId: _id, name: _name, createdAt: _created, updatedAt: _updated, ...registration } = client;
  return JSON.stringify(registration satisfies Registration);
}

export function createOidcClientStore(db: Kysely<Database>): OidcClientStore {
  // Every token request authenticates its client: the lookup is compiled once (as the session check's).
  const findSql = db.selectFrom('oidc_clients').selectAll().where('client_id', '=', '').compile().sql;
  const findRow = async (clientId: string): Promise<Selectable<OidcClientsTable> | undefined> =>
    (await db.executeQuery<Selectable<OidcClientsTable>>(CompiledQuery.raw(findSql, [clientId]))).rows[0];
  return {
    async createClient(client, secretHash) {
      await db
        .insertInto('oidc_clients')
        .values({
          client_id: client.clientId,
          name: client.name,
          secret_hash: secretHash,
          registration: registrationOf(client),
          created_at: client.createdAt.getTime(),
          updated_at: client.updatedAt.getTime(),
        })
        .execute();
    },

    async listClients() {
      const rows = await db.selectFrom('oidc_clients').selectAll().orderBy('created_at').orderBy('client_id').execute();
      return rows.map(toClient);
    },

    async findClient(clientId) {
      const row = await findRow(clientId);
      return row === undefined ? null : { client: toClient(row), secretHash: row.secret_hash };
    },

    async updateClient(clientId, changes, now) {
      return db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('oidc_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
        if (row === undefined) return null;
        const updated: OidcClient = { ...toClient(row), ...changes, updatedAt: now };
        await trx
          .updateTable('oidc_clients')
          .set({ name: updated.name, registration: registrationOf(updated), updated_at: now.getTime() })
          .where('client_id', '=', clientId)
          .execute();
        return updated;
      });
    },

    async deleteClient(clientId) {
      return db.transaction().execute(async (trx) => {
        const result = await trx.deleteFrom('oidc_clients').where('client_id', '=', clientId).executeTakeFirst();
        if (Number(result.numDeletedRows) === 0) return false;
        // Its grants, and every code and token issued under them.
        const grants = await trx.selectFrom('oidc_records').select('grant_id').where('client_id', '=', clientId).where('grant_id', 'is not', null).execute();
        const grantIds = [...new Set(grants.map((row) => row.grant_id).filter((id): id is string => id !== null))];
        if (grantIds.length > 0) await trx.deleteFrom('oidc_records').where('grant_id', 'in', grantIds).execute();
        await trx.deleteFrom('oidc_records').where('client_id', '=', clientId).execute();
        return true;
      });
    },

    async replaceSecret(clientId, secretHash, now) {
      const result = await db
        .updateTable('oidc_clients')
        .set({ secret_hash: secretHash, updated_at: now.getTime() })
        .where('client_id', '=', clientId)
        .where('secret_hash', 'is not', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async countClients() {
      const row = await db
        .selectFrom('oidc_clients')
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },
  };
}
