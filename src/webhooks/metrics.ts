/**
 * @module The webhooks' metrics, added to /metrics by the capability (metrics.extend): attempts by
 * result, counted by the delivery worker, and the backlog of due deliveries — one indexed query per
 * scrape, bounded in time, shared by its two gauges (absent from a scrape whose query failed).
 */
import type { Kysely } from 'kysely';
import type { Registry } from 'prom-client';
import type { Database } from '../db/schema.js';
import { queryWebhookBacklog } from '../db/webhook-delivery-store.js';
import type { Logger } from '../logger.js';
import type { MetricsExtension, PromClient } from '../metrics/metrics.js';
import type { DeliveryResult } from './worker.js';

/** A scrape waits at most this long; then the backlog gauges are left out of that scrape. */
export const WEBHOOK_BACKLOG_TIMEOUT_MS = 1000;

interface WebhookBacklog {
  /** Pending deliveries already due. */
  count: number;
  /** How long the oldest of them has existed; 0 when there is none. */
  oldestAgeSeconds: number;
}

export interface WebhookMetrics extends MetricsExtension {
  /** Counts a recorded attempt's result (the worker's `metrics`). */
  webhookDelivery(result: DeliveryResult): void;
}

const RESULTS: readonly DeliveryResult[] = ['delivered', 'retry', 'failed'];

export function createWebhookMetrics(db: Kysely<Database>, logger: Logger, timeoutMs = WEBHOOK_BACKLOG_TIMEOUT_MS): WebhookMetrics {
  const deliveries = new Map<DeliveryResult, number>();
  let backlog: Promise<WebhookBacklog | null> = Promise.resolve(null);
  return {
    webhookDelivery(result) {
      deliveries.set(result, (deliveries.get(result) ?? 0) + 1);
    },
    beforeScrape() {
      backlog = readBacklog(db, timeoutMs).catch((error: unknown) => {
        logger.warn({ err: error }, 'metrics: the webhook backlog could not be read');
        return null;
      });
    },
    register: (prom, registry) => register(prom, registry, deliveries, () => backlog),
  };
}

async function readBacklog(db: Kysely<Database>, timeoutMs: number): Promise<WebhookBacklog> {
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
}

function register(prom: PromClient, registry: Registry, deliveries: ReadonlyMap<DeliveryResult, number>, backlog: () => Promise<WebhookBacklog | null>): void {
  new prom.Counter({
    name: 'gatehouse_webhook_deliveries_total',
    help: 'Webhook attempts this process recorded, by result: delivered (2xx), retry (failed, tried again later), failed (the last attempt failed).',
    labelNames: ['result'],
    registers: [registry],
    collect() {
      this.reset();
      for (const result of RESULTS) this.inc({ result }, deliveries.get(result) ?? 0);
    },
  });
  new prom.Gauge({
    name: 'gatehouse_webhook_backlog_age_seconds',
    help: 'Age of the oldest webhook delivery that is due and not yet delivered (0 when none): growing means the worker is behind or stopped.',
    registers: [registry],
    async collect() {
      this.reset();
      const read = await backlog();
      if (read !== null) this.set(read.oldestAgeSeconds);
    },
  });
  new prom.Gauge({
    name: 'gatehouse_webhook_backlog_deliveries',
    help: 'Webhook deliveries that are due and not yet delivered.',
    registers: [registry],
    async collect() {
      this.reset();
      const read = await backlog();
      if (read !== null) this.set(read.count);
    },
  });
}
