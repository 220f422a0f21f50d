/** @module WebhookEndpointStore over Kysely. */
import type { Kysely, Selectable } from 'kysely';
import type { WebhookEndpoint, WebhookEndpointStore } from '../webhooks/store.js';
import type { Database, WebhookEndpointsTable } from './schema.js';

/** The filter as the event store matches it with LIKE: `,user.created,session.created,`. */
function eventsColumn(events: readonly string[]): string {
  return `,${events.join(',')},`;
}

function toEndpoint(row: Selectable<WebhookEndpointsTable>): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: row.events.split(',').filter((name) => name !== ''),
    description: row.description,
    enabled: row.disabled_at === null,
    disabledReason: row.disabled_at === null ? null : row.disabled_reason === 'failing' ? 'failing' : 'manual',
    createdAt: new Date(Number(row.created_at)),
    updatedAt: new Date(Number(row.updated_at)),
  };
}

export function createWebhookEndpointStore(db: Kysely<Database>): WebhookEndpointStore {
  const find = async (id: string): Promise<WebhookEndpoint | null> => {
    const row = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? null : toEndpoint(row);
  };
  return {
    ...secretMethods(db),
    async createEndpoint(endpoint, secretSealed) {
      await db
        .insertInto('webhook_endpoints')
        .values({
          id: endpoint.id,
          url: endpoint.url,
          events: eventsColumn(endpoint.events),
          description: endpoint.description,
          secret_sealed: secretSealed,
          previous_secret_sealed: null,
          previous_secret_until: null,
          disabled_at: endpoint.enabled ? null : endpoint.createdAt.getTime(),
          disabled_reason: endpoint.enabled ? null : 'manual',
          failing_since: null,
          created_at: endpoint.createdAt.getTime(),
          updated_at: endpoint.updatedAt.getTime(),
        })
        .execute();
    },

    async listEndpoints() {
      const rows = await db.selectFrom('webhook_endpoints').selectAll().orderBy('created_at').orderBy('id').execute();
      return rows.map(toEndpoint);
    },

    findEndpoint: find,

    async updateEndpoint(id, changes, now) {
      const set: Partial<Selectable<WebhookEndpointsTable>> = { updated_at: now.getTime() };
      if (changes.url !== undefined) set.url = changes.url;
      if (changes.events !== undefined) set.events = eventsColumn(changes.events);
      if (changes.description !== undefined) set.description = changes.description;
      if (changes.enabled === true) Object.assign(set, { disabled_at: null, disabled_reason: null, failing_since: null });
      const result = await db.updateTable('webhook_endpoints').set(set).where('id', '=', id).executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return null;
      if (changes.enabled === false) {
        // Only an enabled endpoint takes the operator's date: one disabled for failing keeps its reason.
        await db
          .updateTable('webhook_endpoints')
          .set({ disabled_at: now.getTime(), disabled_reason: 'manual' })
          .where('id', '=', id)
          .where('disabled_at', 'is', null)
          .execute();
      }
      return find(id);
    },

    async deleteEndpoint(id) {
      const result = await db.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async countEndpoints() {
      const rows = await db.selectFrom('webhook_endpoints').select('disabled_at').execute();
      return { total: rows.length, enabled: rows.filter((row) => row.disabled_at === null).length };
    },
  };
}

/** Reading the sealed secrets and replacing them (a rotation). */
function secretMethods(db: Kysely<Database>): Pick<WebhookEndpointStore, 'findSecrets' | 'rotateSecret'> {
  return {
    async findSecrets(id) {
      const row = await db
        .selectFrom('webhook_endpoints')
        .select(['secret_sealed', 'previous_secret_sealed', 'previous_secret_until'])
        .where('id', '=', id)
        .executeTakeFirst();
      if (row === undefined) return null;
      return {
        sealed: row.secret_sealed,
        previousSealed: row.previous_secret_sealed,
        previousUntil: row.previous_secret_until === null ? null : new Date(Number(row.previous_secret_until)),
      };
    },

    async rotateSecret(id, secrets, now) {
      const result = await db
        .updateTable('webhook_endpoints')
        .set({
          secret_sealed: secrets.sealed,
          previous_secret_sealed: secrets.previousSealed,
          previous_secret_until: secrets.previousUntil?.getTime() ?? null,
          updated_at: now.getTime(),
        })
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
  };
}
