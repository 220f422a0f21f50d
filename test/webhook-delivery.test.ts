/**
 * The webhook delivery worker and the delivery store against a real receiver on 127.0.0.1 that
 * verifies every request with the `standardwebhooks` package, on both databases. The clock is
 * moved for retries; the receiver checks each timestamp against that clock.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { MockClock } from '../src/clock.js';
import { createEnvelope, type Envelope } from '../src/crypto/envelope.js';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../src/db/connect.js';
import { createWebhookDeliveryStore, queryWebhookBacklog, type WebhookDeliveryStoreWithDispatch } from '../src/db/webhook-delivery-store.js';
import { createWebhookEventStore } from '../src/db/webhook-event-store.js';
import { createLogger } from '../src/logger.js';
import { createWebhookMetrics } from '../src/webhooks/metrics.js';
import { createMetrics } from '../src/metrics/metrics.js';
import { buildEvent, type WebhookEvent } from '../src/webhooks/events.js';
import { sealWebhookSecret } from '../src/webhooks/secret.js';
import type { WebhookDelivery } from '../src/webhooks/store.js';
import { RETRY_DELAYS_MS, UNREADABLE_SECRET_ERROR, createWebhookDispatcher, type WebhookDispatcher } from '../src/webhooks/worker.js';
import { describeEachDialect, openTestDatabase } from './support/harness.js';
import { postgresUrl } from './support/services.js';

const DAY_MS = 24 * 60 * 60 * 1000;

interface Received {
  path: string;
  id: string;
  timestamp: number;
  body: string;
  /** The secrets (by name) whose signature verified, checked at the test clock's time. */
  verifiedWith: string[];
}

type Respond = (request: http.IncomingMessage, response: http.ServerResponse, received: Received) => void;

/** A receiver on 127.0.0.1: records every request, verifies it with each known secret, answers as `respond` says. */
class Receiver {
  readonly received: Received[] = [];
  readonly secrets = new Map<string, string>();
  respond: Respond = (_request, response) => response.writeHead(204).end();
  readonly server: http.Server;

  constructor(private readonly clock: MockClock) {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
        const entry: Received = {
          path: request.url ?? '',
          id: headers['webhook-id'] ?? '',
          timestamp: Number(headers['webhook-timestamp']),
          body,
          verifiedWith: [...this.secrets].filter(([, secret]) => this.verifies(secret, body, headers)).map(([name]) => name),
        };
        this.received.push(entry);
        this.respond(request, response, entry);
      });
    });
  }

  /** standardwebhooks checks the timestamp against Date.now(): here, the test clock's now. */
  private verifies(secret: string, body: string, headers: Record<string, string>): boolean {
    const spy = vi.spyOn(Date, 'now').mockReturnValue(this.clock.now().getTime());
    try {
      new Webhook(secret).verify(body, headers);
      return true;
    } catch {
      return false;
    } finally {
      spy.mockRestore();
    }
  }

  async listen(port = 0): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  idsReceived(): string[] {
    return this.received.map((entry) => entry.id);
  }
}

describeEachDialect('webhook delivery', (dialect) => {
  let database: DatabaseHandle;
  let drop: () => Promise<void>;
  let deliveries: WebhookDeliveryStoreWithDispatch;
  let envelope: Envelope;
  let clock: MockClock;
  let receiver: Receiver;
  let base: string;
  let disabledCalls: string[];
  const counted: string[] = [];
  const logger = createLogger({ level: 'silent' });
  const closers: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    const opened = await openTestDatabase(dialect);
    database = opened.database;
    drop = opened.drop;
    await migrateToLatest(database);
    deliveries = createWebhookDeliveryStore(database.kysely, database.dialect);
    envelope = createEnvelope([randomBytes(32)]);
    // Near real time: the receiver's library refuses a timestamp 5 minutes from what it takes as now.
    clock = new MockClock(Math.floor(Date.now() / 1000) * 1000);
    receiver = new Receiver(clock);
    base = await receiver.listen();
    disabledCalls = [];
    counted.length = 0;
  });
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    await receiver.close();
    await drop();
  });

  function dispatcher(options: { timeoutMs?: number; store?: WebhookDeliveryStoreWithDispatch } = {}): WebhookDispatcher {
    return createWebhookDispatcher({
      deliveries: options.store ?? deliveries,
      envelope,
      clock,
      logger,
      send: { timeoutMs: options.timeoutMs ?? 5_000, requireHttps: false, allowPrivateNetworks: true },
      metrics: { webhookDelivery: (result) => void counted.push(result) },
      onEndpointDisabled: async (endpointId) => void disabledCalls.push(endpointId),
    });
  }

  async function addEndpoint(
    options: { url?: string; secret?: string; previous?: { secret: string; until: Date } } = {},
  ): Promise<{ id: string; secret: string }> {
    const id = randomUUID();
    const secret = options.secret ?? `whsec_${randomBytes(32).toString('base64')}`;
    const now = clock.now().getTime();
    await database.kysely
      .insertInto('webhook_endpoints')
      .values({
        id,
        url: options.url ?? `${base}/hook`,
        events: ',*,',
        description: null,
        secret_sealed: sealWebhookSecret(envelope, id, secret),
        previous_secret_sealed: options.previous ? sealWebhookSecret(envelope, id, options.previous.secret) : null,
        previous_secret_until: options.previous ? options.previous.until.getTime() : null,
        disabled_at: null,
        disabled_reason: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    receiver.secrets.set('current', secret);
    return { id, secret };
  }

  async function addEvent(userId: string | null): Promise<WebhookEvent> {
    const event =
      userId === null
        ? buildEvent(clock.now(), 'webhook.test', null, { webhookId: 'w' })
        : buildEvent(clock.now(), 'user.created', { id: userId, email: `${userId}@example.com` }, { method: 'password', emailVerified: false });
    await createWebhookEventStore(database.kysely).recordEvent(event);
    return event;
  }

  async function onlyDelivery(endpointId: string): Promise<WebhookDelivery> {
    const page = await deliveries.listDeliveries(endpointId, { status: null, cursor: null, limit: 10 });
    expect(page?.deliveries).toHaveLength(1);
    return page?.deliveries[0] as WebhookDelivery;
  }

  /** Moves the clock through the retry waits, draining after each; returns the reports. */
  async function runSchedule(worker: WebhookDispatcher): Promise<{ delivered: number; retried: number; failed: number }[]> {
    const reports = [];
    for (const wait of RETRY_DELAYS_MS) {
      clock.advance(wait);
      reports.push(await worker.drain());
    }
    return reports;
  }

  test('a 2xx answer delivers the signed event: Standard Webhooks headers, the stored body, one attempt', async () => {
    const endpoint = await addEndpoint();
    const event = await addEvent('user-1');
    expect(await dispatcher().drain()).toEqual({ delivered: 1, retried: 0, failed: 0 });
    expect(receiver.received).toEqual([
      { path: '/hook', id: event.id, timestamp: Math.floor(clock.now().getTime() / 1000), body: event.payload, verifiedWith: ['current'] },
    ]);
    expect(JSON.parse(receiver.received[0]?.body ?? '')).toMatchObject({ type: 'user.created', data: { userId: 'user-1', method: 'password' } });
    const delivery = await onlyDelivery(endpoint.id);
    expect(delivery).toMatchObject({ eventId: event.id, type: 'user.created', status: 'delivered', nextAttemptAt: null });
    expect(delivery.attempts).toEqual([{ at: clock.now(), statusCode: 204, durationMs: expect.any(Number), error: null }]);
    expect(counted).toEqual(['delivered']);
    // Nothing is due any more.
    expect(await dispatcher().drain()).toEqual({ delivered: 0, retried: 0, failed: 0 });
    expect(receiver.received).toHaveLength(1);
  });

  test('a started dispatcher polls, and stop() waits for the attempt in flight', async () => {
    let answer: () => void = () => {};
    const arrived = new Promise<void>((resolve) => {
      receiver.respond = (_request, response) => {
        answer = () => response.writeHead(200).end();
        resolve();
      };
    });
    const endpoint = await addEndpoint();
    await addEvent('user-1');
    const worker = dispatcher();
    worker.start(10);
    await arrived;
    const stopping = worker.stop();
    answer();
    await stopping;
    expect((await onlyDelivery(endpoint.id)).status).toBe('delivered');
    // Stopped: a kick starts nothing.
    await addEvent('user-2');
    worker.kick();
    await worker.stop();
    expect(receiver.received).toHaveLength(1);
  });

  test('a failing receiver is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h with the same webhook-id, then failed', async () => {
    receiver.respond = (_request, response) => response.writeHead(500).end('down');
    const endpoint = await addEndpoint();
    const event = await addEvent('user-1');
    const worker = dispatcher();
    expect(await worker.drain()).toEqual({ delivered: 0, retried: 1, failed: 0 });
    // Not before its time.
    clock.advance(4_999);
    expect(await worker.drain()).toEqual({ delivered: 0, retried: 0, failed: 0 });
    clock.advance(-4_999);
    const reports = await runSchedule(worker);
    expect(reports.slice(0, 6)).toEqual(Array.from({ length: 6 }, () => ({ delivered: 0, retried: 1, failed: 0 })));
    expect(reports[6]).toEqual({ delivered: 0, retried: 0, failed: 1 });
    expect(receiver.received).toHaveLength(8);
    expect(new Set(receiver.idsReceived())).toEqual(new Set([event.id]));
    expect(receiver.received.every((entry) => entry.verifiedWith.includes('current'))).toBe(true);
    const gaps = receiver.received.slice(1).map((entry, i) => (entry.timestamp - (receiver.received[i]?.timestamp ?? 0)) * 1000);
    expect(gaps).toEqual([...RETRY_DELAYS_MS]);
    const delivery = await onlyDelivery(endpoint.id);
    expect(delivery.status).toBe('failed');
    expect(delivery.nextAttemptAt).toBeNull();
    expect(delivery.attempts.map((attempt) => attempt.statusCode)).toEqual(Array.from({ length: 8 }, () => 500));
    expect(counted).toEqual([...Array.from({ length: 7 }, () => 'retry'), 'failed']);
    // Failed stays failed.
    clock.advance(DAY_MS);
    expect(await worker.drain()).toEqual({ delivered: 0, retried: 0, failed: 0 });
    expect(receiver.received).toHaveLength(8);
  });

  test('after a rotation both secrets verify until the old one expires', async () => {
    const old = `whsec_${randomBytes(32).toString('base64')}`;
    await addEndpoint({ previous: { secret: old, until: new Date(clock.now().getTime() + DAY_MS) } });
    receiver.secrets.set('old', old);
    await addEvent('user-1');
    await dispatcher().drain();
    expect(receiver.received[0]?.verifiedWith).toEqual(['current', 'old']);
    clock.advance(DAY_MS);
    await addEvent('user-2');
    await dispatcher().drain();
    expect(receiver.received[1]?.verifiedWith).toEqual(['current']);
  });

  test('a secret that no longer opens fails the attempt without sending anything', async () => {
    const endpoint = await addEndpoint();
    // Sealed for another endpoint: the binding refuses it, as it would a removed key.
    await database.kysely
      .updateTable('webhook_endpoints')
      .set({ secret_sealed: sealWebhookSecret(envelope, 'another', 'whsec_x') })
      .where('id', '=', endpoint.id)
      .execute();
    await addEvent('user-1');
    expect(await dispatcher().drain()).toEqual({ delivered: 0, retried: 1, failed: 0 });
    expect(receiver.received).toHaveLength(0);
    expect((await onlyDelivery(endpoint.id)).attempts).toEqual([{ at: clock.now(), statusCode: null, durationMs: 0, error: UNREADABLE_SECRET_ERROR }]);
  });

  test('a receiver that is down is retried and gets the event once it is up', async () => {
    const down = new Receiver(clock);
    const url = await down.listen();
    await down.close();
    const endpoint = await addEndpoint({ url: `${url}/late` });
    const event = await addEvent('user-1');
    const worker = dispatcher();
    expect(await worker.drain()).toEqual({ delivered: 0, retried: 1, failed: 0 });
    const [attempt] = (await onlyDelivery(endpoint.id)).attempts;
    expect(attempt).toMatchObject({ statusCode: null, error: expect.any(String) });
    expect(attempt?.error?.length).toBeGreaterThan(0);
    const up = new Receiver(clock);
    up.secrets.set('current', endpoint.secret);
    await up.listen(Number(new URL(url).port));
    closers.push(() => up.close());
    clock.advance(5_000);
    expect(await worker.drain()).toEqual({ delivered: 1, retried: 0, failed: 0 });
    expect(up.received).toMatchObject([{ path: '/late', id: event.id, verifiedWith: ['current'] }]);
    expect((await onlyDelivery(endpoint.id)).status).toBe('delivered');
  });

  test("one user's events wait behind a failing one, others go on, and they follow once it has failed", async () => {
    const endpoint = await addEndpoint();
    const first = await addEvent('user-1');
    const second = await addEvent('user-1');
    const otherUser = await addEvent('user-2');
    const noUser = await addEvent(null);
    receiver.respond = (_request, response, entry) => response.writeHead(entry.id === first.id ? 503 : 200).end();
    const worker = dispatcher();
    expect(await worker.drain()).toEqual({ delivered: 2, retried: 1, failed: 0 });
    expect(new Set(receiver.idsReceived())).toEqual(new Set([first.id, otherUser.id, noUser.id]));
    const reports = await runSchedule(worker);
    expect(reports.at(-1)).toEqual({ delivered: 1, retried: 0, failed: 1 });
    const ids = receiver.idsReceived();
    expect(ids.filter((id) => id === first.id)).toHaveLength(8);
    // The second arrived only after the first's last attempt.
    expect(ids.indexOf(second.id)).toBe(ids.length - 1);
    const page = await deliveries.listDeliveries(endpoint.id, { status: null, cursor: null, limit: 10 });
    expect(page?.deliveries.map((delivery) => [delivery.eventId, delivery.status])).toEqual([
      [noUser.id, 'delivered'],
      [otherUser.id, 'delivered'],
      [second.id, 'delivered'],
      [first.id, 'failed'],
    ]);
  });

  test('an answer slower than the timeout fails the attempt', async () => {
    receiver.respond = () => {}; // never answers
    const endpoint = await addEndpoint();
    await addEvent('user-1');
    expect(await dispatcher({ timeoutMs: 300 }).drain()).toEqual({ delivered: 0, retried: 1, failed: 0 });
    expect(receiver.received).toHaveLength(1);
    const [attempt] = (await onlyDelivery(endpoint.id)).attempts;
    expect(attempt).toMatchObject({ statusCode: null, error: expect.stringMatching(/\S/) });
    expect(attempt?.durationMs).toBeGreaterThanOrEqual(250);
  });

  test('a redirect is not followed: the attempt fails with its status', async () => {
    receiver.respond = (request, response) => {
      if (request.url === '/hook') response.writeHead(302, { location: '/elsewhere' }).end();
      else response.writeHead(200).end();
    };
    const endpoint = await addEndpoint();
    await addEvent('user-1');
    expect(await dispatcher().drain()).toEqual({ delivered: 0, retried: 1, failed: 0 });
    expect(receiver.received.map((entry) => entry.path)).toEqual(['/hook']);
    expect((await onlyDelivery(endpoint.id)).attempts[0]?.statusCode).toBe(302);
  });

  test('listDeliveries: newest first, a cursor to older pages, a status filter, attempts per delivery', async () => {
    const endpoint = await addEndpoint();
    const events: WebhookEvent[] = [];
    for (let i = 0; i < 5; i++) {
      events.push(await addEvent(`user-${i}`));
      clock.advance(1_000);
    }
    receiver.respond = (_request, response, entry) => response.writeHead(entry.id === events[1]?.id ? 500 : 200).end();
    await dispatcher().drain();
    const first = await deliveries.listDeliveries(endpoint.id, { status: null, cursor: null, limit: 2 });
    expect(first?.deliveries.map((delivery) => delivery.eventId)).toEqual([events[4]?.id, events[3]?.id]);
    expect(first?.nextCursor).toEqual(expect.any(String));
    const second = await deliveries.listDeliveries(endpoint.id, { status: null, cursor: first?.nextCursor ?? null, limit: 2 });
    expect(second?.deliveries.map((delivery) => delivery.eventId)).toEqual([events[2]?.id, events[1]?.id]);
    const third = await deliveries.listDeliveries(endpoint.id, { status: null, cursor: second?.nextCursor ?? null, limit: 2 });
    expect(third).toEqual({ deliveries: [expect.objectContaining({ eventId: events[0]?.id })], nextCursor: null });

    const pending = await deliveries.listDeliveries(endpoint.id, { status: 'pending', cursor: null, limit: 10 });
    expect(pending?.deliveries).toEqual([
      {
        id: expect.any(String),
        eventId: events[1]?.id,
        type: 'user.created',
        status: 'pending',
        attempts: [expect.objectContaining({ at: clock.now(), statusCode: 500, durationMs: expect.any(Number) })],
        nextAttemptAt: new Date(clock.now().getTime() + 5_000),
        createdAt: new Date((events[1]?.createdAt.getTime() ?? 0) + 0),
      },
    ]);
    expect(pending?.nextCursor).toBeNull();
    const delivered = await deliveries.listDeliveries(endpoint.id, { status: 'delivered', cursor: null, limit: 10 });
    expect(delivered?.deliveries).toHaveLength(4);
    expect(await deliveries.listDeliveries(endpoint.id, { status: 'failed', cursor: null, limit: 10 })).toEqual({ deliveries: [], nextCursor: null });
    const found = await deliveries.findDelivery(endpoint.id, pending?.deliveries[0]?.id ?? '');
    expect(found).toEqual(pending?.deliveries[0]);
    expect(await deliveries.findDelivery(randomUUID(), pending?.deliveries[0]?.id ?? '')).toBeNull();
    expect(await deliveries.listDeliveries(randomUUID(), { status: null, cursor: null, limit: 10 })).toBeNull();
    expect(await deliveries.listDeliveries(endpoint.id, { status: null, cursor: 'not-a-cursor', limit: 10 })).toEqual({ deliveries: [], nextCursor: null });
  });

  test('a failed delivery retried by hand is due at once and the next round delivers it', async () => {
    receiver.respond = (_request, response) => response.writeHead(500).end();
    const endpoint = await addEndpoint();
    const event = await addEvent('user-1');
    const worker = dispatcher();
    await worker.drain();
    await runSchedule(worker);
    const failed = await onlyDelivery(endpoint.id);
    expect(failed.status).toBe('failed');
    receiver.respond = (_request, response) => response.writeHead(200).end();
    clock.advance(60_000);
    expect(await deliveries.retryDelivery(endpoint.id, failed.id, clock.now())).toBe('due');
    expect((await onlyDelivery(endpoint.id)).nextAttemptAt).toEqual(clock.now());
    expect(await worker.drain()).toEqual({ delivered: 1, retried: 0, failed: 0 });
    expect(receiver.idsReceived().at(-1)).toBe(event.id);
    const delivered = await onlyDelivery(endpoint.id);
    expect(delivered).toMatchObject({ status: 'delivered', nextAttemptAt: null });
    expect(delivered.attempts).toHaveLength(9);
    expect(await deliveries.retryDelivery(endpoint.id, failed.id, clock.now())).toBe('delivered');
    expect(await deliveries.retryDelivery(endpoint.id, randomUUID(), clock.now())).toBeNull();
    expect(await deliveries.retryDelivery(randomUUID(), failed.id, clock.now())).toBeNull();
  });

  test('an endpoint failing for 5 days is disabled (once, reported) and its deliveries wait', async () => {
    receiver.respond = (_request, response) => response.writeHead(500).end();
    const endpoint = await addEndpoint();
    const healthy = await addEndpoint();
    await addEvent('user-1');
    const worker = dispatcher();
    expect(await worker.drain()).toEqual({ delivered: 0, retried: 2, failed: 0 });
    const since = clock.now().getTime();
    const failingSince = async (id: string): Promise<number | null> =>
      (await database.kysely.selectFrom('webhook_endpoints').select('failing_since').where('id', '=', id).executeTakeFirstOrThrow()).failing_since;
    expect(Number(await failingSince(endpoint.id))).toBe(since);
    // A success ends the failing run.
    receiver.respond = (request, response) => response.writeHead(request.url === '/healthy' ? 200 : 500).end();
    await database.kysely
      .updateTable('webhook_endpoints')
      .set({ url: `${base}/healthy` })
      .where('id', '=', healthy.id)
      .execute();
    clock.advance(5_000);
    await worker.drain();
    expect(await failingSince(healthy.id)).toBeNull();
    expect(Number(await failingSince(endpoint.id))).toBe(since); // a later failure keeps the run's start
    clock.set(since + 5 * DAY_MS - 1);
    await addEvent('user-2');
    await worker.drain();
    expect(disabledCalls).toEqual([]);
    clock.set(since + 5 * DAY_MS);
    await addEvent('user-3');
    await worker.drain();
    expect(disabledCalls).toEqual([endpoint.id]);
    const row = await database.kysely.selectFrom('webhook_endpoints').selectAll().where('id', '=', endpoint.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ disabled_reason: 'failing' });
    expect(Number(row.disabled_at)).toBe(clock.now().getTime());
    const sent = receiver.received.filter((entry) => entry.path === '/hook').length;
    clock.advance(DAY_MS);
    await worker.drain();
    expect(receiver.received.filter((entry) => entry.path === '/hook')).toHaveLength(sent);
    const waiting = await deliveries.listDeliveries(endpoint.id, { status: 'pending', cursor: null, limit: 10 });
    expect(waiting?.deliveries.length).toBeGreaterThan(0);
  });

  test('an attempt whose claim expired and was taken by another worker is not recorded twice', async () => {
    const endpoint = await addEndpoint();
    await addEvent('user-1');
    const [stale] = await deliveries.claimDueDeliveries(clock.now(), 10, 1_000);
    expect(stale).toBeDefined();
    expect(await deliveries.claimDueDeliveries(clock.now(), 10, 1_000)).toEqual([]); // held
    clock.advance(1_000);
    const [fresh] = await deliveries.claimDueDeliveries(clock.now(), 10, 1_000);
    expect(fresh?.id).toBe(stale?.id);
    const attempt = { at: clock.now(), statusCode: 200, durationMs: 3, error: null };
    expect(await deliveries.recordAttempt(stale!, attempt, { status: 'delivered' }, clock.now())).toEqual({ recorded: false, endpointDisabled: false });
    expect(await deliveries.recordAttempt(fresh!, attempt, { status: 'delivered' }, clock.now())).toEqual({ recorded: true, endpointDisabled: false });
    expect((await onlyDelivery(endpoint.id)).attempts).toHaveLength(1);
    const long = { at: clock.now(), statusCode: null, durationMs: 1, error: 'x'.repeat(2_000) };
    await addEvent('user-2');
    const [next] = await deliveries.claimDueDeliveries(clock.now(), 10, 1_000);
    await deliveries.recordAttempt(next!, long, { status: 'failed' }, clock.now());
    const failed = await deliveries.findDelivery(endpoint.id, next!.id);
    expect(failed?.attempts[0]?.error).toHaveLength(500);
  });

  test('two dispatchers draining at once send each delivery once, each user in order', async () => {
    // PostgreSQL: two connections to one database. SQLite (one writer): two dispatchers on one handle.
    let other = deliveries;
    if (dialect === 'postgres') {
      const schema = (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.kysely)).rows[0]?.schema;
      const second = openDatabase({ kind: 'postgres', connectionString: postgresUrl ?? '' }, { postgresSchema: schema, poolSize: 5 });
      closers.push(() => second.close());
      other = createWebhookDeliveryStore(second.kysely, second.dialect);
    }
    await addEndpoint();
    const sent: WebhookEvent[] = [];
    for (let i = 0; i < 200; i++) sent.push(await addEvent(i % 4 === 0 ? null : `user-${i % 10}`));
    const [a, b] = await Promise.all([dispatcher().drain(), dispatcher({ store: other }).drain()]);
    expect((a?.delivered ?? 0) + (b?.delivered ?? 0)).toBe(200);
    const ids = receiver.idsReceived();
    expect(ids).toHaveLength(200);
    expect(new Set(ids).size).toBe(200);
    expect(receiver.received.every((entry) => entry.verifiedWith.includes('current'))).toBe(true);
    for (const user of ['user-1', 'user-3', 'user-7']) {
      const expected = sent.filter((event) => event.userId === user).map((event) => event.id);
      expect(ids.filter((id) => expected.includes(id))).toEqual(expected);
    }
  });

  test('the sweep deletes old finished events, their deliveries and attempts, in batches, and keeps the rest', async () => {
    const endpoint = await addEndpoint();
    const start = clock.now().getTime();
    clock.set(start - 31 * DAY_MS);
    const oldDelivered = await addEvent('user-1');
    await dispatcher().drain();
    expect(receiver.idsReceived()).toEqual([oldDelivered.id]);
    const oldFailed = await addEvent('user-2');
    const oldPending = await addEvent('user-3');
    await database.kysely.updateTable('webhook_deliveries').set({ status: 'failed' }).where('event_id', '=', oldFailed.id).execute();
    await database.kysely
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', next_attempt_at: start + DAY_MS })
      .where('event_id', '=', oldPending.id)
      .execute();
    // Enough old delivered events for more than one batch.
    await insertDeliveredEvents(endpoint.id, 1_100, start - 40 * DAY_MS);
    clock.set(start);
    const recent = await addEvent('user-4');
    await dispatcher().drain();
    expect(await deliveries.sweepWebhookEvents(clock.now(), 30 * DAY_MS)).toBe(1_102);
    const left = await database.kysely.selectFrom('webhook_events').select('id').orderBy('created_at').execute();
    expect(left.map((row) => row.id).sort()).toEqual([oldPending.id, recent.id].sort());
    const deliveriesLeft = await database.kysely.selectFrom('webhook_deliveries').select('event_id').execute();
    expect(deliveriesLeft.map((row) => row.event_id).sort()).toEqual([oldPending.id, recent.id].sort());
    const attempts = await database.kysely.selectFrom('webhook_delivery_attempts').select('delivery_id').execute();
    expect(attempts).toHaveLength(1); // the recent one's; the old delivered one's went with it
    expect(await deliveries.sweepWebhookEvents(clock.now(), 30 * DAY_MS)).toBe(0);
  });

  async function insertDeliveredEvents(endpointId: string, count: number, at: number): Promise<void> {
    for (let offset = 0; offset < count; offset += 500) {
      const ids = Array.from({ length: Math.min(500, count - offset) }, () => `msg_${randomUUID().replaceAll('-', '')}`);
      await database.kysely
        .insertInto('webhook_events')
        .values(ids.map((id) => ({ id, type: 'user.created', user_id: null, payload: '{}', created_at: at })))
        .execute();
      await database.kysely
        .insertInto('webhook_deliveries')
        .values(
          ids.map((id) => ({
            id: randomUUID(),
            event_id: id,
            endpoint_id: endpointId,
            user_id: null,
            status: 'delivered',
            next_attempt_at: null,
            claim_id: null,
            locked_until: null,
            created_at: at,
            updated_at: at,
          })),
        )
        .execute();
    }
  }

  test('metrics: deliveries by result, and the backlog of due deliveries with its age', async () => {
    const endpoint = await addEndpoint();
    clock.set(Date.now() - 60_000);
    await addEvent('user-1');
    await addEvent('user-2');
    expect(await queryWebhookBacklog(database.kysely, clock.now())).toEqual({ count: 2, oldestCreatedAt: clock.now() });
    const metrics = createMetrics({ token: null, db: database.kysely, hashPool: () => ({ queued: 0, running: 0 }), logger });
    const webhookMetrics = createWebhookMetrics(database.kysely, logger);
    metrics.extend(webhookMetrics);
    webhookMetrics.webhookDelivery('delivered');
    webhookMetrics.webhookDelivery('retry');
    webhookMetrics.webhookDelivery('retry');
    const { text } = await metrics.scrape();
    expect(text).toContain('gatehouse_webhook_deliveries_total{result="delivered"} 1');
    expect(text).toContain('gatehouse_webhook_deliveries_total{result="retry"} 2');
    expect(text).toContain('gatehouse_webhook_deliveries_total{result="failed"} 0');
    expect(text).toContain('gatehouse_webhook_backlog_deliveries 2');
    const age = Number(/^gatehouse_webhook_backlog_age_seconds (\S+)$/m.exec(text)?.[1]);
    expect(age).toBeGreaterThanOrEqual(60);
    expect(age).toBeLessThan(120);
    await dispatcher().drain();
    expect(await queryWebhookBacklog(database.kysely, clock.now())).toEqual({ count: 0, oldestCreatedAt: null });
    expect((await onlyDeliveries(endpoint.id)).every((delivery) => delivery.status === 'delivered')).toBe(true);
  });

  async function onlyDeliveries(endpointId: string): Promise<WebhookDelivery[]> {
    return (await deliveries.listDeliveries(endpointId, { status: null, cursor: null, limit: 50 }))?.deliveries ?? [];
  }
});
