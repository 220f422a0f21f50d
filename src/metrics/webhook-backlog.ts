/** @module The webhook deliveries waiting to be sent, for the metrics: one indexed query, bounded in time. */
import type { Kysely } from 'kysely';
import { queryWebhookBacklog } from '../db/webhook-delivery-store.js';
import type { Database } from '../db/schema.js';

/** A scrape waits at most this long; then the backlog gauges are left out of that scrape. */
export const WEBHOOK_BACKLOG_TIMEOUT_MS = 1000;

export interface WebhookBacklog {
  /** Pending deliveries already due. */
  count: number;
  /** How long the oldest of them has existed; 0 when there is none. */
  oldestAgeSeconds: number;
}

export function createWebhookBacklogQuery(db: Kysely<Database>, timeoutMs = WEBHOOK_BACKLOG_TIMEOUT_MS): () => Promise<WebhookBacklog> {
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the webhook backlog query took longer than ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
    });
    try {
      // The scrape's own time: a worker's injected clock is for its schedule, the gauge tells real age.
      const now = new Date();
      const { count, oldestCreatedAt } = await Promise.race([queryWebhookBacklog(db, now), timeout]);
      return { count, oldestAgeSeconds: oldestCreatedAt === null ? 0 : Math.max(0, (now.getTime() - oldestCreatedAt.getTime()) / 1000) };
    } finally {
      clearTimeout(timer);
    }
  };
}
