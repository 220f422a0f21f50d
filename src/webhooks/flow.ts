/**
 * @module What operators do with webhooks, the same functions behind the admin API and the CLI:
 * register an endpoint (its secret shown once, kept sealed), change, disable, delete it, rotate its
 * secret (both sign for 24 h), queue a test event, list its deliveries and retry one. Every change
 * is audited with the operator's actor; the secret never is.
 */
import { randomUUID } from 'node:crypto';
import type { Operator } from '../admin/flow.js';
import type { AuditEventType, AuditMetadata } from '../audit/audit-log.js';
import type { Envelope } from '../crypto/envelope.js';
import { badRequest, conflict, notFound, serviceUnavailable } from '../errors.js';
import type { RandomReader } from '../random.js';
import type { Stores } from '../stores.js';
import { buildEvent } from './events.js';
import { ROTATION_OVERLAP_MS, generateWebhookSecret, sealWebhookSecret } from './secret.js';
import { urlProblem } from './send.js';
import type { WebhookConfig } from './settings.js';
import type { DeliveryPage, DeliveryStatus, WebhookDelivery, WebhookDeliveryStore, WebhookEndpoint, WebhookEndpointStore } from './store.js';

/** More endpoints than this is a mistake in a script, not a team's receivers. */
export const MAX_ENDPOINTS = 50;

export interface WebhookAdminDeps {
  endpoints: WebhookEndpointStore;
  deliveries: WebhookDeliveryStore;
  stores: Pick<Stores, 'audit' | 'webhookEvents'>;
  /** Null without ENCRYPTION_KEY_BASE64 (or, outside production, the generated key): endpoints cannot be created. */
  envelope: Envelope | null;
  random: RandomReader;
  settings: Pick<WebhookConfig, 'requireHttps' | 'allowPrivateNetworks'>;
  /** Tells the delivery worker something is due now (a test event, a retry). */
  deliverNow: () => void;
}

export interface EndpointInput {
  url: string;
  events: string[];
  description?: string | null;
}

const NO_SUCH_WEBHOOK = 'There is no webhook endpoint with this id.';

function requireEnvelope(deps: Pick<WebhookAdminDeps, 'envelope'>): Envelope {
  if (deps.envelope === null) {
    throw serviceUnavailable('Webhooks need ENCRYPTION_KEY_BASE64 (openssl rand -base64 32) to keep their signing secrets sealed.');
  }
  return deps.envelope;
}

function checkUrl(deps: Pick<WebhookAdminDeps, 'settings'>, url: string): void {
  const problem = urlProblem(url, deps.settings);
  if (problem !== null) throw badRequest('invalid_webhook_url', `The webhook URL is refused: ${problem}.`);
}

/**
 * What the audit trail keeps of a receiver's URL: its origin. A path or query may carry the
 * receiver's own token (`/hooks/T0/B0/secret`, `?key=…`), and audit rows outlive the endpoint.
 */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(not a URL)';
  }
}

async function audit(
  deps: Pick<WebhookAdminDeps, 'stores'>,
  operator: Operator | 'system',
  type: AuditEventType,
  metadata: AuditMetadata,
  now: Date,
): Promise<void> {
  await deps.stores.audit.recordEvent({
    type,
    userId: null,
    ip: operator === 'system' ? null : operator.ip,
    userAgent: operator === 'system' ? null : operator.userAgent,
    metadata: { actor: operator === 'system' ? 'system' : operator.actor, ...metadata },
    at: now,
  });
}

export async function findWebhook(deps: Pick<WebhookAdminDeps, 'endpoints'>, id: string): Promise<WebhookEndpoint> {
  const endpoint = await deps.endpoints.findEndpoint(id);
  if (endpoint === null) throw notFound(NO_SUCH_WEBHOOK);
  return endpoint;
}

export async function createWebhook(deps: WebhookAdminDeps, input: EndpointInput, operator: Operator): Promise<{ webhook: WebhookEndpoint; secret: string }> {
  const envelope = requireEnvelope(deps);
  checkUrl(deps, input.url);
  const { total } = await deps.endpoints.countEndpoints();
  if (total >= MAX_ENDPOINTS) throw conflict('webhook_limit_reached', `At most ${MAX_ENDPOINTS} webhook endpoints can be registered; delete one first.`);
  const id = randomUUID();
  const secret = generateWebhookSecret(deps.random);
  const webhook: WebhookEndpoint = {
    id,
    url: input.url,
    events: input.events,
    description: input.description ?? null,
    enabled: true,
    disabledReason: null,
    createdAt: operator.now,
    updatedAt: operator.now,
  };
  await deps.endpoints.createEndpoint(webhook, sealWebhookSecret(envelope, id, secret));
  await audit(deps, operator, 'webhook_created', { webhookId: id, origin: originOf(input.url), events: input.events.join(',') }, operator.now);
  return { webhook, secret };
}

export async function updateWebhook(
  deps: WebhookAdminDeps,
  id: string,
  changes: Partial<EndpointInput> & { enabled?: boolean },
  operator: Operator,
): Promise<{ webhook: WebhookEndpoint }> {
  if (changes.url !== undefined) checkUrl(deps, changes.url);
  const webhook = await deps.endpoints.updateEndpoint(id, changes, operator.now);
  if (webhook === null) throw notFound(NO_SUCH_WEBHOOK);
  const changed = Object.keys(changes).sort().join(',');
  await audit(deps, operator, 'webhook_updated', { webhookId: id, origin: originOf(webhook.url), changed, enabled: webhook.enabled }, operator.now);
  return { webhook };
}

export async function deleteWebhook(deps: WebhookAdminDeps, id: string, operator: Operator): Promise<{ deleted: true }> {
  const webhook = await findWebhook(deps, id);
  if (!(await deps.endpoints.deleteEndpoint(id))) throw notFound(NO_SUCH_WEBHOOK);
  await audit(deps, operator, 'webhook_deleted', { webhookId: id, origin: originOf(webhook.url) }, operator.now);
  return { deleted: true };
}

/** A new secret, shown once; the one it replaces keeps signing beside it for 24 hours. */
export async function rotateWebhookSecret(
  deps: WebhookAdminDeps,
  id: string,
  operator: Operator,
): Promise<{ secret: string; previousSecretExpiresAt: string }> {
  const envelope = requireEnvelope(deps);
  const current = await deps.endpoints.findSecrets(id);
  if (current === null) throw notFound(NO_SUCH_WEBHOOK);
  const secret = generateWebhookSecret(deps.random);
  const previousUntil = new Date(operator.now.getTime() + ROTATION_OVERLAP_MS);
  const rotated = await deps.endpoints.rotateSecret(
    id,
    { sealed: sealWebhookSecret(envelope, id, secret), previousSealed: current.sealed, previousUntil },
    operator.now,
  );
  if (!rotated) throw notFound(NO_SUCH_WEBHOOK);
  await audit(deps, operator, 'webhook_secret_rotated', { webhookId: id, previousSecretExpiresAt: previousUntil.toISOString() }, operator.now);
  return { secret, previousSecretExpiresAt: previousUntil.toISOString() };
}

/** Queues `webhook.test` to this endpoint alone, whatever its events filter, and sends it at once. */
export async function testWebhook(deps: WebhookAdminDeps, id: string, now: Date): Promise<{ eventId: string }> {
  const webhook = await findWebhook(deps, id);
  if (!webhook.enabled) throw conflict('webhook_disabled', 'This endpoint is disabled; enable it (PATCH with enabled: true) before testing it.');
  const event = buildEvent(now, 'webhook.test', null, { webhookId: id });
  await deps.stores.webhookEvents.recordEvent(event, { onlyEndpointId: id });
  deps.deliverNow();
  return { eventId: event.id };
}

export async function listWebhookDeliveries(
  deps: Pick<WebhookAdminDeps, 'deliveries'>,
  id: string,
  query: { status: DeliveryStatus | null; cursor: string | null; limit: number },
): Promise<DeliveryPage> {
  const page = await deps.deliveries.listDeliveries(id, query);
  if (page === null) throw notFound(NO_SUCH_WEBHOOK);
  return page;
}

export async function retryWebhookDelivery(deps: WebhookAdminDeps, id: string, deliveryId: string, now: Date): Promise<{ delivery: WebhookDelivery }> {
  const outcome = await deps.deliveries.retryDelivery(id, deliveryId, now);
  if (outcome === null) throw notFound('This endpoint has no delivery with this id.');
  if (outcome === 'delivered') throw conflict('already_delivered', 'This delivery was delivered; there is nothing to retry.');
  deps.deliverNow();
  const delivery = await deps.deliveries.findDelivery(id, deliveryId);
  if (delivery === null) throw notFound('This endpoint has no delivery with this id.');
  return { delivery };
}

/** The worker disabled an endpoint that failed for 5 days: the operators' trail says so. */
export async function auditEndpointDisabled(deps: Pick<WebhookAdminDeps, 'stores' | 'endpoints'>, endpointId: string, now: Date): Promise<void> {
  const webhook = await deps.endpoints.findEndpoint(endpointId);
  await audit(
    deps,
    'system',
    'webhook_disabled',
    { webhookId: endpointId, origin: webhook === null ? null : originOf(webhook.url), reason: 'failing for 5 days' },
    now,
  );
}
