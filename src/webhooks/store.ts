/**
 * @module What webhooks keep: the endpoints operators register (endpoint store) and the deliveries
 * the worker makes (delivery store). Implemented in db/webhook-endpoint-store.ts and
 * db/webhook-delivery-store.ts; the events themselves are written by the flows (events.ts).
 */
import type { EndpointSecrets } from './secret.js';

export interface WebhookEndpoint {
  id: string;
  url: string;
  /** Event types, or `['*']`. */
  events: string[];
  description: string | null;
  enabled: boolean;
  /** Why it is disabled: `manual` (an operator) or `failing` (5 days of failed attempts); null while enabled. */
  disabledReason: 'manual' | 'failing' | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface WebhookEndpointStore {
  createEndpoint(endpoint: WebhookEndpoint, secretSealed: string): Promise<void>;
  listEndpoints(): Promise<WebhookEndpoint[]>;
  findEndpoint(id: string): Promise<WebhookEndpoint | null>;
  /** Null when there is no such endpoint. Enabling clears the failing run, so a revived endpoint starts afresh. */
  updateEndpoint(
    id: string,
    changes: { url?: string; events?: string[]; description?: string | null; enabled?: boolean },
    now: Date,
  ): Promise<WebhookEndpoint | null>;
  /** Its deliveries go with it. False when there was none. */
  deleteEndpoint(id: string): Promise<boolean>;
  /** Replaces the secret; the current one keeps signing until `previousUntil`. False when there is no such endpoint. */
  rotateSecret(id: string, secrets: EndpointSecrets, now: Date): Promise<boolean>;
  countEndpoints(): Promise<{ enabled: number; total: number }>;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryAttempt {
  at: Date;
  /** The answer's status; null when there was none (refused address, timeout, connection error). */
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/** One event to one endpoint, as the operators' list shows it. */
export interface WebhookDelivery {
  id: string;
  eventId: string;
  type: string;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  /** When the worker tries next; null once delivered or failed. */
  nextAttemptAt: Date | null;
  createdAt: Date;
}

export interface DeliveryPage {
  deliveries: WebhookDelivery[];
  /** Pass back as `cursor` for the next (older) page; null on the last. */
  nextCursor: string | null;
}

export interface WebhookDeliveryStore {
  /** Newest first; `cursor` from the previous page. Null when the endpoint does not exist. */
  listDeliveries(endpointId: string, query: { status: DeliveryStatus | null; cursor: string | null; limit: number }): Promise<DeliveryPage | null>;
  /**
   * Makes a pending or failed delivery due now; null when the endpoint has no such delivery,
   * `delivered` when it was already delivered (nothing changes).
   */
  retryDelivery(endpointId: string, deliveryId: string, now: Date): Promise<'due' | 'delivered' | null>;
  findDelivery(endpointId: string, deliveryId: string): Promise<WebhookDelivery | null>;
}
