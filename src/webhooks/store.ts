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
  /** The sealed secrets that sign now; null when there is no such endpoint. */
  findSecrets(id: string): Promise<EndpointSecrets | null>;
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

/** A delivery one worker holds: what it needs to sign and send one attempt. */
export interface ClaimedDelivery {
  id: string;
  /** This claim's token: recording an attempt is conditional on it still holding the delivery. */
  claimId: string;
  endpointId: string;
  url: string;
  secrets: EndpointSecrets;
  /** When the endpoint's current run of failures began; null while it is healthy. */
  endpointFailingSince: Date | null;
  /** Attempts made before this one. */
  attemptCount: number;
  event: { id: string; type: string; payload: string; createdAt: Date };
}

/** What becomes of a delivery after an attempt: delivered, tried again at `retryAt`, or failed for good. */
export type AttemptOutcome = { status: 'delivered' } | { status: 'pending'; retryAt: Date } | { status: 'failed' };

/** The worker's side of the deliveries (webhooks/worker.ts). */
export interface WebhookDispatchStore {
  /**
   * Claims up to `limit` due deliveries of enabled endpoints for `leaseMs`, skipping any that waits
   * for an earlier pending delivery of the same endpoint and user. Several workers claim disjoint rows.
   */
  claimDueDeliveries(now: Date, limit: number, leaseMs: number): Promise<ClaimedDelivery[]>;
  /**
   * Records one attempt and the delivery's new state, and the endpoint's failing run, only if the
   * claim still holds (`recorded: false` otherwise: the lease ran out and another worker took it).
   * `endpointDisabled` is true when this failure disabled the endpoint (failing for 5 days).
   */
  recordAttempt(
    claim: ClaimedDelivery,
    attempt: DeliveryAttempt,
    outcome: AttemptOutcome,
    now: Date,
  ): Promise<{ recorded: boolean; endpointDisabled: boolean }>;
  /** Deletes events older than `olderThanMs` none of whose deliveries is pending, in batches; returns how many. */
  sweepWebhookEvents(now: Date, olderThanMs: number): Promise<number>;
  /** Pending deliveries due now, and the creation of the oldest (null when none): the backlog. */
  webhookBacklog(now: Date): Promise<{ count: number; oldestCreatedAt: Date | null }>;
}
