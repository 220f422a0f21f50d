/**
 * @module `gatehouse webhooks …`: the operators' webhook tools over the same flows as the admin
 * API (flow.ts), and the delivery worker alone (`webhooks worker`). A test event or a retry made
 * here is sent by the running servers' (or workers') next round, within a second.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Operator } from '../admin/flow.js';
import { UsageError } from '../admin/cli.js';
import { parse as parseQuery } from '../admin/input.js';
import type { CliCommand } from '../capability.js';
import { systemClock } from '../clock.js';
import type { Config } from '../config.js';
import { createEnvelope } from '../crypto/envelope.js';
import { migrateToLatest, openDatabase } from '../db/connect.js';
import { createStores } from '../db/stores.js';
import { createWebhookDeliveryStore } from '../db/webhook-delivery-store.js';
import { createWebhookEndpointStore } from '../db/webhook-endpoint-store.js';
import { AppError } from '../errors.js';
import { secureRandom } from '../random.js';
import {
  createWebhook,
  deleteWebhook,
  listWebhookDeliveries,
  retryWebhookDelivery,
  rotateWebhookSecret,
  testWebhook,
  updateWebhook,
  type WebhookAdminDeps,
} from './flow.js';
import { DEFAULT_DELIVERY_PAGE, createWebhookBody, deliveriesQuery, isWebhookId } from './input.js';
import { runWebhookWorkerCommand } from './worker-command.js';

export const WEBHOOKS_USAGE = `Usage: gatehouse webhooks <command> [options]

  list                                           the endpoints
  create --url URL --event E [--event E2]… [--description TEXT]
                                                 register an endpoint (--event '*' for every event);
                                                 prints its signing secret, once
  enable ID | disable ID                         start or stop deliveries to an endpoint
  delete ID                                      delete an endpoint and its deliveries
  rotate-secret ID                               a new secret, printed once; the old one signs too for 24 h
  test ID                                        send it a webhook.test event
  deliveries ID [--status pending|delivered|failed] [--limit n] [--cursor c]
                                                 its deliveries, newest first, with each attempt
  retry ID DELIVERY_ID                           attempt a pending or failed delivery now
  worker [--once]                                deliver webhooks (alone, beside servers with WEBHOOK_DELIVERY=worker)`;

function parse(args: string[], options: NonNullable<ParseArgsConfig['options']>): ReturnType<typeof parseArgs> {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message, WEBHOOKS_USAGE);
  }
}

function oneId(positionals: string[], action: string, count = 1): string[] {
  if (positionals.length !== count || !positionals.every(isWebhookId)) {
    throw new UsageError(`webhooks ${action} takes ${count === 1 ? 'an endpoint id' : 'an endpoint id and a delivery id'} (UUIDs).`, WEBHOOKS_USAGE);
  }
  return positionals;
}

/** The database and the sealing key, the flow's deps over them, and a close. */
async function withWebhookDeps(config: Readonly<Config>, work: (deps: WebhookAdminDeps) => Promise<void>): Promise<void> {
  const database = openDatabase(config.database, { queryTimeoutMs: config.databaseQueryTimeoutMs });
  try {
    if (config.migrateOnStart) await migrateToLatest(database);
    const keys = config.encryptionKeys.length > 0 ? config.encryptionKeys : config.generatedEncryptionKey !== null ? [config.generatedEncryptionKey] : [];
    const stores = createStores(database.kysely, database.dialect);
    await work({
      endpoints: createWebhookEndpointStore(database.kysely),
      deliveries: createWebhookDeliveryStore(database.kysely, database.dialect),
      stores,
      envelope: keys.length > 0 ? createEnvelope(keys) : null,
      random: secureRandom,
      settings: config.webhooks,
      // The servers' (or workers') next round sends it: this process does not deliver.
      deliverNow: () => {},
    });
  } finally {
    await database.close();
  }
}

const print = (line: string): void => console.log(line);

async function runAction(deps: WebhookAdminDeps, action: string, rest: string[], operator: Operator): Promise<void> {
  if (action === 'list') {
    parse(rest, {});
    const endpoints = await deps.endpoints.listEndpoints();
    if (endpoints.length === 0) return print('No webhook endpoints.');
    for (const endpoint of endpoints) {
      const state = endpoint.enabled ? 'enabled' : `disabled (${endpoint.disabledReason ?? 'manual'})`;
      print(`${endpoint.id}  ${state}  ${endpoint.url}  ${endpoint.events.join(',')}`);
    }
    return;
  }
  if (action === 'create') {
    const { values, positionals } = parse(rest, { url: { type: 'string' }, event: { type: 'string', multiple: true }, description: { type: 'string' } });
    if (positionals.length > 0 || typeof values.url !== 'string' || !Array.isArray(values.event)) {
      throw new UsageError('webhooks create needs --url and at least one --event.', WEBHOOKS_USAGE);
    }
    const input = { url: values.url, events: values.event as string[], description: (values.description as string | undefined) ?? null };
    const { webhook, secret } = await createWebhook(deps, validated(input), operator);
    print(`Created webhook ${webhook.id} for ${webhook.url} (${webhook.events.join(',')}).`);
    print(`Signing secret (shown once, keep it with the receiver): ${secret}`);
    return;
  }
  if (action === 'deliveries') return deliveriesAction(deps, rest);
  return singleAction(deps, action, rest, operator);
}

async function singleAction(deps: WebhookAdminDeps, action: string, rest: string[], operator: Operator): Promise<void> {
  const { positionals } = parse(rest, {});
  if (action === 'retry') {
    const [id = '', deliveryId = ''] = oneId(positionals, action, 2);
    const { delivery } = await retryWebhookDelivery(deps, id, deliveryId, operator.now);
    return print(`Delivery ${delivery.id} is due now (${delivery.attempts.length} attempts so far).`);
  }
  const [id = ''] = oneId(positionals, action);
  if (action === 'enable' || action === 'disable') {
    const { webhook } = await updateWebhook(deps, id, { enabled: action === 'enable' }, operator);
    return print(`Webhook ${webhook.id} is ${webhook.enabled ? 'enabled' : 'disabled'}.`);
  }
  if (action === 'delete') {
    await deleteWebhook(deps, id, operator);
    return print(`Deleted webhook ${id} and its deliveries.`);
  }
  if (action === 'rotate-secret') {
    const { secret, previousSecretExpiresAt } = await rotateWebhookSecret(deps, id, operator);
    print(`New signing secret (shown once): ${secret}`);
    return print(`The previous secret signs too until ${previousSecretExpiresAt}.`);
  }
  if (action === 'test') {
    const { eventId } = await testWebhook(deps, id, operator.now);
    return print(`Queued webhook.test ${eventId}; see: gatehouse webhooks deliveries ${id}`);
  }
  throw new UsageError(`Unknown webhooks command "${action}".`, WEBHOOKS_USAGE);
}

async function deliveriesAction(deps: WebhookAdminDeps, rest: string[]): Promise<void> {
  const { values, positionals } = parse(rest, { status: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' } });
  const [id = ''] = oneId(positionals, 'deliveries');
  const query = asUsage(() => parseQuery(deliveriesQuery, values as Record<string, string | undefined>));
  const page = await listWebhookDeliveries(deps, id, {
    status: query.status ?? null,
    cursor: query.cursor ?? null,
    limit: query.limit ?? DEFAULT_DELIVERY_PAGE,
  });
  if (page.deliveries.length === 0) print('No deliveries.');
  for (const delivery of page.deliveries) {
    const last = delivery.attempts.at(-1);
    const outcome =
      last === undefined ? 'not attempted yet' : `${last.statusCode ?? '-'} in ${last.durationMs} ms${last.error === null ? '' : `: ${last.error}`}`;
    const next = delivery.nextAttemptAt === null ? '' : `, next ${delivery.nextAttemptAt.toISOString()}`;
    print(
      `${delivery.id}  ${delivery.createdAt.toISOString()}  ${delivery.type}  ${delivery.status}  ${delivery.attempts.length} attempts (${outcome}${next})`,
    );
  }
  if (page.nextCursor !== null) console.error(`More deliveries follow: --cursor ${page.nextCursor}`);
}

/** The same checks as the API's body (input.ts), as a usage error naming the option. */
function validated(input: { url: string; events: string[]; description: string | null }): typeof input {
  const result = createWebhookBody.safeParse(input);
  if (!result.success) {
    const option = (path: PropertyKey | undefined): string => (path === 'events' ? 'event' : String(path ?? 'url'));
    throw new UsageError(result.error.issues.map((issue) => `--${option(issue.path[0])}: ${issue.message}`).join('; '), WEBHOOKS_USAGE);
  }
  return input;
}

function asUsage<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof AppError && error.code === 'validation_error') {
      throw new UsageError((error.issues ?? []).map((issue) => `--${issue.path}: ${issue.message}`).join('; ') || error.message, WEBHOOKS_USAGE);
    }
    throw error;
  }
}

export const WEBHOOK_COMMANDS: readonly CliCommand[] = [
  {
    name: 'webhooks',
    summary: 'webhooks <list|create|enable|disable|delete|rotate-secret|test|deliveries|retry|worker> …  webhook endpoints (gatehouse webhooks --help)',
    usage: WEBHOOKS_USAGE,
    async run(config, args) {
      const [action, ...rest] = args;
      if (action === undefined) throw new UsageError('Name a webhooks command.', WEBHOOKS_USAGE);
      if (action === '--help' || action === '-h' || action === 'help') return void console.log(WEBHOOKS_USAGE);
      if (action === 'worker') return runWebhookWorkerCommand(config, rest);
      const operator: Operator = { actor: 'cli', ip: null, userAgent: null, now: systemClock.now() };
      await withWebhookDeps(config, (deps) => runAction(deps, action, rest, operator));
    },
  },
];
