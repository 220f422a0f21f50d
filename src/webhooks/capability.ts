/**
 * @module Webhooks as a capability: the admin API's endpoints (mounted only with ADMIN_API_KEY,
 * behind its key check, before the admin capability's routes), the `gatehouse webhooks` commands,
 * the delivery worker (started by `gatehouse serve` with WEBHOOK_DELIVERY=server) and the sweep of
 * finished events. The events themselves are written by the flows (events.ts).
 */
import { adminKeyCheck } from '../admin/routes.js';
import { defineCapability } from '../capability.js';
import { createEnvelope } from '../crypto/envelope.js';
import { createWebhookDeliveryStore } from '../db/webhook-delivery-store.js';
import { createWebhookEndpointStore } from '../db/webhook-endpoint-store.js';
import type { SharedParts } from '../parts.js';
import { webhookLine } from './banner.js';
import { WEBHOOK_COMMANDS } from './cli.js';
import { auditEndpointDisabled, type WebhookAdminDeps } from './flow.js';
import { createWebhookMetrics } from './metrics.js';
import { createWebhookRoutes, webhookRouteDocs } from './routes.js';
import { EVENT_RETENTION_MS, createWebhookDispatcher } from './worker.js';

export const webhooks = defineCapability({
  name: 'webhooks',
  routeDocs: [{ prefix: '/api/admin', docs: webhookRouteDocs }],
  commands: WEBHOOK_COMMANDS,
  build: (parts: Pick<SharedParts, 'config' | 'database' | 'stores' | 'limits' | 'random' | 'clock' | 'logger' | 'metrics'>) => {
    const { config } = parts;
    // Secrets are sealed with ENCRYPTION_KEY_BASE64, or outside production with the generated key;
    // with neither, creating an endpoint answers 503 naming the variable.
    const keys = config.encryptionKeys.length > 0 ? config.encryptionKeys : config.generatedEncryptionKey !== null ? [config.generatedEncryptionKey] : [];
    const envelope = keys.length > 0 ? createEnvelope(keys) : null;
    const endpoints = createWebhookEndpointStore(parts.database.kysely);
    const deliveries = createWebhookDeliveryStore(parts.database.kysely, parts.database.dialect);
    const metrics = createWebhookMetrics(parts.database.kysely, parts.logger);
    parts.metrics.extend(metrics);
    const dispatcher =
      envelope === null
        ? null
        : createWebhookDispatcher({
            deliveries,
            envelope,
            clock: parts.clock,
            logger: parts.logger,
            send: {
              timeoutMs: config.webhooks.timeoutMs,
              requireHttps: config.webhooks.requireHttps,
              allowPrivateNetworks: config.webhooks.allowPrivateNetworks,
            },
            metrics,
            onEndpointDisabled: (endpointId, now) => auditEndpointDisabled({ stores: parts.stores, endpoints }, endpointId, now),
          });
    const delivering = dispatcher !== null && config.webhooks.delivery === 'server' ? dispatcher : null;
    const flow: WebhookAdminDeps = {
      endpoints,
      deliveries,
      stores: parts.stores,
      envelope,
      random: parts.random,
      settings: config.webhooks,
      deliverNow: () => delivering?.kick(),
    };
    const apiKey = config.adminApiKey;
    const routes =
      apiKey === null
        ? []
        : [{ prefix: '/api/admin', routes: createWebhookRoutes({ flow, requireAdminKey: adminKeyCheck({ apiKey, limits: parts.limits }) }) }];
    return {
      routes,
      sweep: async (now) => ({ webhookEvents: await deliveries.sweepWebhookEvents(now, EVENT_RETENTION_MS) }),
      ...(delivering === null ? {} : { worker: { start: () => delivering.start(), drain: () => delivering.drain(), stop: () => delivering.stop() } }),
      startLines: async () => [webhookLine(config, await endpoints.countEndpoints())],
    };
  },
});
