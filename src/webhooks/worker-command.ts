/**
 * @module `gatehouse webhooks worker [--once]`: the delivery worker alone, as `gatehouse mail` is
 * the email sender alone. Several may run against one database beside the servers (each claims
 * disjoint deliveries). With `--once` it delivers what is due and exits (cron, tests); otherwise
 * it polls every second until SIGTERM or SIGINT, then finishes the attempts in flight.
 */
import { UsageError } from '../admin/cli.js';
import { systemClock } from '../clock.js';
import { ConfigError, type Config } from '../config.js';
import { createEnvelope } from '../crypto/envelope.js';
import { migrateToLatest, openDatabase } from '../db/connect.js';
import { createStores } from '../db/stores.js';
import { createWebhookDeliveryStore } from '../db/webhook-delivery-store.js';
import { createWebhookEndpointStore } from '../db/webhook-endpoint-store.js';
import { withPersistedDevEncryptionKey } from '../dev-secret.js';
import { chooseLogFormat, createCliLogger } from '../logger.js';
import { auditEndpointDisabled } from './flow.js';
import { createWebhookDispatcher, DEFAULT_POLL_MS } from './worker.js';

export const WORKER_USAGE = 'Usage: gatehouse webhooks worker [--once]';

export async function runWebhookWorkerCommand(given: Readonly<Config>, args: readonly string[]): Promise<void> {
  const unknown = args.filter((arg) => arg !== '--once');
  if (unknown.length > 0) throw new UsageError(`webhooks worker: unknown argument "${unknown[0]}"`, WORKER_USAGE);
  const once = args.includes('--once');
  const logger = createCliLogger({ level: given.logLevel, format: chooseLogFormat(given.logFormat, process.stdout.isTTY === true) });
  // Outside production the servers seal secrets with the key kept in the data folder: the same one here.
  const config = withPersistedDevEncryptionKey(given, logger);
  const keys = config.encryptionKeys.length > 0 ? config.encryptionKeys : config.generatedEncryptionKey !== null ? [config.generatedEncryptionKey] : [];
  if (keys.length === 0) throw new ConfigError(['ENCRYPTION_KEY_BASE64: required for the webhook worker, which opens the endpoints’ sealed signing secrets']);
  const database = openDatabase(config.database, { queryTimeoutMs: config.databaseQueryTimeoutMs });
  try {
    if (config.migrateOnStart) await migrateToLatest(database);
    const stores = createStores(database.kysely, database.dialect);
    const endpoints = createWebhookEndpointStore(database.kysely);
    const dispatcher = createWebhookDispatcher({
      deliveries: createWebhookDeliveryStore(database.kysely, database.dialect),
      envelope: createEnvelope(keys),
      clock: systemClock,
      logger,
      send: { timeoutMs: config.webhooks.timeoutMs, requireHttps: config.webhooks.requireHttps, allowPrivateNetworks: config.webhooks.allowPrivateNetworks },
      onEndpointDisabled: (endpointId, now) => auditEndpointDisabled({ stores, endpoints }, endpointId, now),
    });
    logger.info({ once }, 'webhook worker started');
    if (once) {
      const report = await dispatcher.drain();
      logger.info(report, 'webhook deliveries drained');
      return;
    }
    // The dispatcher's poll timer does not hold the process open (in `serve` the server does):
    // this one does, until a signal.
    const keepAlive = setInterval(() => {}, 60_000);
    await new Promise<void>((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
      dispatcher.start(DEFAULT_POLL_MS);
    });
    clearInterval(keepAlive);
    logger.info('webhook worker stopping: finishing the attempts in flight');
    await dispatcher.stop();
  } finally {
    await database.close();
  }
}
