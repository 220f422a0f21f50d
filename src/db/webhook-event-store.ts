/** @module WebhookEventStore over Kysely: the event and its deliveries, in the caller's transaction. */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { WebhookEventStore } from '../webhooks/events.js';
import type { Database } from './schema.js';

export function createWebhookEventStore(db: Kysely<Database>): WebhookEventStore {
  return {
    async recordEvent(event, options = {}) {
      const { onlyEndpointId } = options;
      // One indexed read of a small table; without an endpoint that wants the event nothing is
      // written, so an install without webhooks pays one read per reported change.
      const endpoints = await db
        .selectFrom('webhook_endpoints')
        .select('id')
        .where((eb) =>
          onlyEndpointId !== undefined
            ? eb('id', '=', onlyEndpointId)
            : eb.and([eb('disabled_at', 'is', null), eb.or([eb('events', 'like', '%,*,%'), eb('events', 'like', `%,${event.type},%`)])]),
        )
        .execute();
      if (endpoints.length === 0) return;
      const at = event.createdAt.getTime();
      await db.insertInto('webhook_events').values({ id: event.id, type: event.type, user_id: event.userId, payload: event.payload, created_at: at }).execute();
      await db
        .insertInto('webhook_deliveries')
        .values(
          endpoints.map((endpoint) => ({
            id: randomUUID(),
            event_id: event.id,
            endpoint_id: endpoint.id,
            user_id: event.userId,
            status: 'pending',
            next_attempt_at: at,
            claim_id: null,
            locked_until: null,
            created_at: at,
            updated_at: at,
          })),
        )
        .execute();
    },
  };
}
