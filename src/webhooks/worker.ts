/**
 * @module The webhook delivery loop (DESIGN §11.2, Delivery): each round claims up to 32 due
 * deliveries, sends up to 8 at once, and records each attempt. A failed attempt is retried after
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h; the 8th failure leaves the delivery `failed`
 * (retryable by hand). Every attempt carries the event's id as `webhook-id`, so a receiver can
 * drop the duplicates at-least-once delivery brings.
 *
 * A claim is held for the timeout and 30 s more: a worker that dies mid-send releases its
 * deliveries after that, and the store refuses to record an attempt whose claim was lost, so two
 * workers never both record one attempt. All times come from the injected clock.
 */
import type { Clock } from '../clock.js';
import type { Envelope } from '../crypto/envelope.js';
import type { Logger } from '../logger.js';
import { signatureHeader } from './secret.js';
import { sendWebhook, type SendResult, type SendSettings } from './send.js';
import type { AttemptOutcome, ClaimedDelivery, WebhookDispatchStore } from './store.js';

/** The waits after the 1st … 7th failed attempt; the 8th failure is final. */
export const RETRY_DELAYS_MS: readonly number[] = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Deliveries one round claims, and how many of them are sent at once. */
export const ROUND_SIZE = 32;
export const CONCURRENCY = 8;
/** Beyond the attempt's timeout, how long a claim is held before another worker may take it. */
export const LEASE_MARGIN_MS = 30_000;
export const DEFAULT_POLL_MS = 1_000;
/** Finished events are kept this long for the operators' delivery list, then swept (`sweepWebhookEvents`). */
export const EVENT_RETENTION_MS = 30 * 24 * 3_600_000;

export const UNREADABLE_SECRET_ERROR = 'signing secret cannot be opened (ENCRYPTION_KEY_BASE64 changed?)';

export type DeliveryResult = 'delivered' | 'retry' | 'failed';

/** A type, not an interface: it is read as a `Record<string, number>` (capability workers' reports). */
export type RoundReport = { delivered: number; retried: number; failed: number };

export interface WebhookDispatcherDeps {
  deliveries: WebhookDispatchStore;
  envelope: Envelope;
  clock: Clock;
  logger: Logger;
  send: SendSettings;
  /** Counts each recorded attempt's result (webhooks/metrics.ts). */
  metrics?: { webhookDelivery(result: DeliveryResult): void };
  /** An attempt's failure disabled the endpoint (5 days failing): audit it. */
  onEndpointDisabled(endpointId: string, now: Date): Promise<void>;
  /** The HTTP attempt; `sendWebhook` unless a test swaps it. */
  sender?: typeof sendWebhook;
}

export interface WebhookDispatcher {
  /** Starts a round now (deliveries were just queued or retried); coalesces with a running one. */
  kick(): void;
  /** Runs rounds until nothing is due, after any running one; for tests and `--once`. */
  drain(): Promise<RoundReport>;
  /** Polls every `pollMs` until `stop()`. */
  start(pollMs?: number): void;
  /** No new round starts; waits for the one in flight. */
  stop(): Promise<void>;
}

export function createWebhookDispatcher(deps: WebhookDispatcherDeps): WebhookDispatcher {
  let running: Promise<RoundReport> | null = null;
  let again = false;
  let stopped = false;
  let poller: NodeJS.Timeout | null = null;

  const start = (): Promise<RoundReport> => {
    const run = drainDue(deps, () => stopped).finally(() => {
      running = null;
      if (again && !stopped) {
        again = false;
        start().catch(() => {});
      }
    });
    running = run;
    run.catch((error: unknown) => deps.logger.error({ err: error }, 'webhook delivery round failed; it is retried'));
    return run;
  };

  const waitUntilIdle = async (): Promise<void> => {
    while (running) await running.catch(() => {});
  };

  const kick = (): void => {
    if (stopped) return;
    if (running) again = true;
    else start().catch(() => {});
  };

  return {
    kick,
    async drain() {
      // As the email pump: a run started by a kick meanwhile is waited for too, so nothing claimed
      // by this process is still in flight on return.
      await waitUntilIdle();
      const report = await start();
      await waitUntilIdle();
      return report;
    },
    start(pollMs = DEFAULT_POLL_MS) {
      if (stopped || poller !== null) return;
      poller = setInterval(kick, pollMs);
      poller.unref();
      kick();
    },
    async stop() {
      stopped = true;
      again = false;
      if (poller !== null) clearInterval(poller);
      poller = null;
      await waitUntilIdle();
    },
  };
}

/** Rounds until one claims nothing, or until stopped (the round in flight finishes). */
async function drainDue(deps: WebhookDispatcherDeps, stopped: () => boolean): Promise<RoundReport> {
  const total: RoundReport = { delivered: 0, retried: 0, failed: 0 };
  while (!stopped()) {
    const claims = await deps.deliveries.claimDueDeliveries(deps.clock.now(), ROUND_SIZE, deps.send.timeoutMs + LEASE_MARGIN_MS);
    if (claims.length === 0) return total;
    await eachConcurrently(claims, CONCURRENCY, async (claim) => {
      const result = await deliverOnce(deps, claim);
      if (result === 'delivered') total.delivered += 1;
      else if (result === 'retry') total.retried += 1;
      else if (result === 'failed') total.failed += 1;
    });
  }
  return total;
}

async function eachConcurrently<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** The signed headers of one attempt at `at`; null when no secret of the endpoint opens. */
export function attemptHeaders(envelope: Envelope, claim: ClaimedDelivery, at: Date): Record<string, string> | null {
  const signature = signatureHeader(envelope, claim.endpointId, claim.secrets, { id: claim.event.id, timestamp: at, payload: claim.event.payload }, at);
  if (signature === null) return null;
  return {
    'content-type': 'application/json',
    'webhook-id': claim.event.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
}

/**
 * What follows an attempt that made `attemptsMade` in all. A failed delivery retried by hand has
 * made 8 already: it gets that one attempt, and is failed again if it fails.
 */
export function outcomeAfter(delivered: boolean, attemptsMade: number, now: Date): AttemptOutcome {
  if (delivered) return { status: 'delivered' };
  const delay = RETRY_DELAYS_MS[attemptsMade - 1];
  if (attemptsMade >= MAX_ATTEMPTS || delay === undefined) return { status: 'failed' };
  return { status: 'pending', retryAt: new Date(now.getTime() + delay) };
}

/** One attempt of one claimed delivery; null when it could not be recorded (claim lost, database error). */
async function deliverOnce(deps: WebhookDispatcherDeps, claim: ClaimedDelivery): Promise<DeliveryResult | null> {
  const at = deps.clock.now();
  const headers = attemptHeaders(deps.envelope, claim, at);
  const result: SendResult =
    headers === null
      ? { statusCode: null, durationMs: 0, error: UNREADABLE_SECRET_ERROR, delivered: false }
      : await (deps.sender ?? sendWebhook)(claim.url, headers, claim.event.payload, deps.send);
  const now = deps.clock.now();
  const outcome = outcomeAfter(result.delivered, claim.attemptCount + 1, now);
  const where = { endpointId: claim.endpointId, deliveryId: claim.id, eventId: claim.event.id, type: claim.event.type };
  let recorded: { recorded: boolean; endpointDisabled: boolean };
  try {
    recorded = await deps.deliveries.recordAttempt(
      claim,
      { at, statusCode: result.statusCode, durationMs: result.durationMs, error: result.error },
      outcome,
      now,
    );
  } catch (error) {
    deps.logger.error({ err: error, ...where }, 'a webhook attempt could not be recorded; the delivery is tried again when its claim expires');
    return null;
  }
  if (!recorded.recorded) {
    deps.logger.warn(where, 'a webhook attempt outlived its claim and another worker took the delivery; this attempt is not recorded');
    return null;
  }
  const kind: DeliveryResult = outcome.status === 'delivered' ? 'delivered' : outcome.status === 'pending' ? 'retry' : 'failed';
  deps.metrics?.webhookDelivery(kind);
  if (kind !== 'delivered') {
    const details = { ...where, attempt: claim.attemptCount + 1, statusCode: result.statusCode, error: result.error };
    if (kind === 'failed') deps.logger.warn(details, `webhook delivery failed after ${claim.attemptCount + 1} attempts`);
    else deps.logger.info({ ...details, retryAt: outcome.status === 'pending' ? outcome.retryAt.toISOString() : null }, 'webhook attempt failed; retrying');
  }
  if (recorded.endpointDisabled) await disabled(deps, claim.endpointId, now);
  return kind;
}

async function disabled(deps: WebhookDispatcherDeps, endpointId: string, now: Date): Promise<void> {
  deps.logger.warn({ endpointId }, 'webhook endpoint disabled: its attempts have failed for 5 days');
  try {
    await deps.onEndpointDisabled(endpointId, now);
  } catch (error) {
    deps.logger.error({ err: error, endpointId }, 'the disabled webhook endpoint could not be audited');
  }
}
