/**
 * @module The metrics of one Gatehouse instance (DESIGN §9.6, docs/metrics.md): the recorder the
 * request path and the flows' hooks count into, and the scrape that turns it into Prometheus text.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Logger } from '../logger.js';
import { createOutboxBacklogQuery } from './outbox-backlog.js';
import { createMetricsRecorder, type MetricsRecorder } from './recorder.js';
import { createScraper, type MetricsExposition, type MetricsExtension } from './registry.js';

export type { MetricsExtension, PromClient } from './registry.js';

export interface Metrics {
  recorder: MetricsRecorder;
  token: string | null;
  scrape: () => Promise<MetricsExposition>;
  /** Adds a capability's own metrics (src/webhooks/metrics.ts); called while capabilities are built. */
  extend(extension: MetricsExtension): void;
}

export function createMetrics(deps: {
  token: string | null;
  db: Kysely<Database>;
  hashPool: () => { queued: number; running: number };
  logger: Logger;
}): Metrics {
  const recorder = createMetricsRecorder();
  const extensions: MetricsExtension[] = [];
  return {
    extend: (extension) => void extensions.push(extension),
    recorder,
    token: deps.token,
    scrape: createScraper({
      recorder,
      hashPool: deps.hashPool,
      outboxBacklog: createOutboxBacklogQuery(deps.db),
      extensions,
      logger: deps.logger,
    }),
  };
}
