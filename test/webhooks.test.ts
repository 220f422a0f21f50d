/**
 * Webhooks through the public surface: endpoints managed over the admin API (secret shown once,
 * sealed at rest, audited), events delivered by the gatehouse's own worker to a real receiver
 * that verifies every request with the `standardwebhooks` package, rotation with both
 * signatures for 24 h, the deliveries list, retry, test, disable and delete — both databases.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test, vi } from 'vitest';
import { STRONG_PASSWORD, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const KEY = 'webhook-test-admin-key-0123456789abcdef';
const ENCRYPTION_KEY = randomBytes(32).toString('base64');

interface Received {
  headers: Record<string, string>;
  body: string;
}

/** A receiver on 127.0.0.1 that records every request and answers with `status`. */
async function startReceiver(): Promise<{ url: string; received: Received[]; status: { code: number }; close(): Promise<void> }> {
  const received: Received[] = [];
  const status = { code: 204 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body });
      res.statusCode = status.code;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    status,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The receiver's check, by the `standardwebhooks` library. It also refuses a timestamp five
 * minutes away from its own clock; the gatehouse signs with the test's clock (days from the real
 * one), so the library reads the time the message says it was sent, which the tests assert apart.
 */
function verifies(secret: string, message: Received): boolean {
  vi.useFakeTimers({ toFake: ['Date'], now: Number(message.headers['webhook-timestamp']) * 1000 });
  try {
    new Webhook(secret).verify(message.body, message.headers);
    return true;
  } catch {
    return false;
  } finally {
    vi.useRealTimers();
  }
}

let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

describeEachDialect('webhooks over the admin API', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    receiver.received.length = 0;
    receiver.status.code = 204;
    t = await createTestGatehouse(dialect, {
      env: { ADMIN_API_KEY: KEY, ENCRYPTION_KEY_BASE64: ENCRYPTION_KEY, RATE_LIMIT_ADMIN: '1000/1m', RATE_LIMIT_REGISTER: '1000/15m' },
    });
  });
  afterEach(async () => {
    await t.close();
  });

  const admin = (method: string, path: string, json?: unknown) =>
    t.request(method, `/api/admin${path}`, { json, headers: { authorization: `Bearer ${KEY}` }, ip: '192.0.2.50' });
  const create = async (events: string[] = ['*'], url = receiver.url) => {
    const response = await admin('POST', '/webhooks', { url, events, description: 'billing' });
    expect(response.status).toBe(201);
    return (await response.json()) as { webhook: { id: string; events: string[]; enabled: boolean }; secret: string };
  };
  const register = async (email: string) => {
    const response = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
    expect(response.status).toBe(201);
  };
  const errorOf = async (response: Response) => [response.status, ((await response.json()) as { error: string }).error];
  const typesReceived = () => receiver.received.map((message) => (JSON.parse(message.body) as { type: string }).type);

  test('create: the secret once, sealed at rest, audited without it; a sign-up reaches the receiver signed', async () => {
    const { webhook, secret } = await create(['user.created']);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(webhook).toMatchObject({ url: receiver.url, events: ['user.created'], enabled: true, description: 'billing' });
    const shown = (await (await admin('GET', `/webhooks/${webhook.id}`)).json()) as Record<string, unknown>;
    expect(JSON.stringify(shown)).not.toContain(secret);
    expect(JSON.stringify(await (await admin('GET', '/webhooks')).json())).not.toContain(secret);

    // Nothing in the database signs: neither the secret nor its key material in any column.
    const rows = await sql`select * from webhook_endpoints`.execute(t.database.kysely);
    const dump = JSON.stringify(rows.rows);
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(secret.slice('whsec_'.length));
    const audit = await sql<{ event_type: string; metadata: string }>`select event_type, metadata from audit_events where event_type like 'webhook_%'`.execute(
      t.database.kysely,
    );
    expect(audit.rows.map((row) => row.event_type)).toEqual(['webhook_created']);
    expect(JSON.stringify(audit.rows)).not.toContain(secret.slice('whsec_'.length, 20));

    await register('ada@example.com');
    await t.gatehouse.deliverWebhooks();
    expect(receiver.received).toHaveLength(1);
    const [message] = receiver.received;
    expect(verifies(secret, message!)).toBe(true);
    expect(message!.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(message!.headers['content-type']).toBe('application/json');
    expect(Number(message!.headers['webhook-timestamp'])).toBe(Math.floor(t.clock.now().getTime() / 1000));
    expect(verifies('whsec_' + randomBytes(32).toString('base64'), message!)).toBe(false);
    const event = JSON.parse(message!.body) as { type: string; timestamp: string; data: Record<string, unknown> };
    expect(event).toMatchObject({ type: 'user.created', data: { email: 'ada@example.com', method: 'password', emailVerified: false } });
    expect(event.timestamp).toBe(t.clock.now().toISOString());
    expect(message!.body).not.toContain(STRONG_PASSWORD);
  });

  test("the audit trail keeps a receiver URL's origin, not a token in its path or query", async () => {
    const { webhook } = await create(['*'], `${receiver.url}/T0/receiver-path-token?key=receiver-query-token`);
    await admin('PATCH', `/webhooks/${webhook.id}`, { description: 'crm' });
    await admin('DELETE', `/webhooks/${webhook.id}`);
    const audit = await sql<{ metadata: string }>`select metadata from audit_events where event_type like 'webhook_%'`.execute(t.database.kysely);
    expect(audit.rows).toHaveLength(3);
    const text = JSON.stringify(audit.rows);
    expect(text).toContain(new URL(receiver.url).origin);
    expect(text).not.toContain('receiver-path-token');
    expect(text).not.toContain('receiver-query-token');
  });

  test("GET /metrics carries the capability's metrics: attempts by result and the backlog", async () => {
    const { webhook } = await create();
    receiver.status.code = 503;
    await admin('POST', `/webhooks/${webhook.id}/test`);
    await t.gatehouse.deliverWebhooks();
    const text = await (await t.request('GET', '/metrics')).text();
    expect(text).toContain('gatehouse_webhook_deliveries_total{result="retry"} 1');
    expect(text).toContain('gatehouse_webhook_deliveries_total{result="delivered"} 0');
    // The backlog gauge is read at scrape time from the deliveries table.
    expect(text).toMatch(/^gatehouse_webhook_backlog_deliveries \d+$/m);
  });

  test('bad requests: unknown events, "*" with others, URLs that are not http(s) or carry credentials, unknown ids', async () => {
    expect(await errorOf(await admin('POST', '/webhooks', { url: receiver.url, events: ['user.nope'] }))).toEqual([400, 'validation_error']);
    expect(await errorOf(await admin('POST', '/webhooks', { url: receiver.url, events: ['*', 'user.created'] }))).toEqual([400, 'validation_error']);
    expect(await errorOf(await admin('POST', '/webhooks', { url: receiver.url, events: [] }))).toEqual([400, 'validation_error']);
    expect(await errorOf(await admin('POST', '/webhooks', { url: 'ftp://example.com/x', events: ['*'] }))).toEqual([400, 'invalid_webhook_url']);
    expect(await errorOf(await admin('POST', '/webhooks', { url: 'https://user:pw@example.com/x', events: ['*'] }))).toEqual([400, 'invalid_webhook_url']);
    expect(await errorOf(await admin('POST', '/webhooks', { url: 'not a url', events: ['*'] }))).toEqual([400, 'invalid_webhook_url']);
    expect(await errorOf(await admin('POST', '/webhooks', { url: receiver.url, events: ['*'], secret: 'mine' }))).toEqual([400, 'validation_error']);
    expect(await errorOf(await admin('GET', '/webhooks/not-a-uuid'))).toEqual([404, 'not_found']);
    expect(await errorOf(await admin('GET', '/webhooks/00000000-0000-4000-8000-000000000000'))).toEqual([404, 'not_found']);
    expect(await errorOf(await admin('PATCH', '/webhooks/00000000-0000-4000-8000-000000000000', { enabled: false }))).toEqual([404, 'not_found']);
    expect(await errorOf(await admin('DELETE', '/webhooks/00000000-0000-4000-8000-000000000000'))).toEqual([404, 'not_found']);
    const { webhook } = await create();
    expect(await errorOf(await admin('PATCH', `/webhooks/${webhook.id}`, {}))).toEqual([400, 'validation_error']);
    expect(await errorOf(await admin('GET', `/webhooks/${webhook.id}/deliveries?status=lost`))).toEqual([400, 'validation_error']);
    expect(await errorOf(await admin('GET', `/webhooks/${webhook.id}/deliveries?cursor=abc`))).toEqual([400, 'validation_error']);
    expect(await errorOf(await t.request('GET', '/api/admin/webhooks'))).toEqual([401, 'admin_unauthorized']);
  });

  test('the events filter: only the types asked for; webhook.test whatever the filter, sent at once', async () => {
    const { webhook, secret } = await create(['user.deleted']);
    await register('filter@example.com');
    await t.gatehouse.deliverWebhooks();
    expect(receiver.received).toHaveLength(0);
    const tested = await admin('POST', `/webhooks/${webhook.id}/test`);
    expect(tested.status).toBe(202);
    const { eventId } = (await tested.json()) as { eventId: string };
    await t.gatehouse.deliverWebhooks();
    expect(typesReceived()).toEqual(['webhook.test']);
    expect(receiver.received[0]!.headers['webhook-id']).toBe(eventId);
    expect(verifies(secret, receiver.received[0]!)).toBe(true);
    expect(JSON.parse(receiver.received[0]!.body).data).toEqual({ webhookId: webhook.id });
  });

  test('rotation: for 24 hours both secrets verify every attempt, then only the new one', async () => {
    const { webhook, secret: oldSecret } = await create();
    const rotated = await admin('POST', `/webhooks/${webhook.id}/secret`);
    expect(rotated.status).toBe(200);
    const { secret: newSecret, previousSecretExpiresAt } = (await rotated.json()) as { secret: string; previousSecretExpiresAt: string };
    expect(newSecret).not.toBe(oldSecret);
    expect(Date.parse(previousSecretExpiresAt) - t.clock.now().getTime()).toBe(24 * 60 * 60 * 1000);

    await admin('POST', `/webhooks/${webhook.id}/test`);
    await t.gatehouse.deliverWebhooks();
    const during = receiver.received.at(-1)!;
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect([verifies(oldSecret, during), verifies(newSecret, during)]).toEqual([true, true]);

    t.clock.advance(24 * 60 * 60 * 1000 + 1000);
    await admin('POST', `/webhooks/${webhook.id}/test`);
    await t.gatehouse.deliverWebhooks();
    const after = receiver.received.at(-1)!;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect([verifies(oldSecret, after), verifies(newSecret, after)]).toEqual([false, true]);
    const audit = await sql<{ event_type: string }>`select event_type from audit_events where event_type = 'webhook_secret_rotated'`.execute(t.database.kysely);
    expect(audit.rows).toHaveLength(1);
  });

  test('deliveries: a failed attempt is listed with its status and next attempt; retry sends it at once; delivered cannot be retried', async () => {
    const { webhook } = await create();
    receiver.status.code = 503;
    await admin('POST', `/webhooks/${webhook.id}/test`);
    await t.gatehouse.deliverWebhooks();
    const page = (await (await admin('GET', `/webhooks/${webhook.id}/deliveries`)).json()) as {
      deliveries: {
        id: string;
        status: string;
        type: string;
        attempts: { statusCode: number | null; durationMs: number; error: string | null }[];
        nextAttemptAt: string | null;
      }[];
      nextCursor: string | null;
    };
    expect(page.nextCursor).toBeNull();
    expect(page.deliveries).toHaveLength(1);
    const [delivery] = page.deliveries;
    expect(delivery).toMatchObject({ type: 'webhook.test', status: 'pending' });
    expect(delivery!.attempts).toHaveLength(1);
    expect(delivery!.attempts[0]!.statusCode).toBe(503);
    expect(Date.parse(delivery!.nextAttemptAt!) - t.clock.now().getTime()).toBe(5_000);

    receiver.status.code = 200;
    const retried = await admin('POST', `/webhooks/${webhook.id}/deliveries/${delivery!.id}/retry`);
    expect(retried.status).toBe(200);
    await t.gatehouse.deliverWebhooks();
    const after = (await (await admin('GET', `/webhooks/${webhook.id}/deliveries?status=delivered`)).json()) as {
      deliveries: { id: string; attempts: unknown[] }[];
    };
    expect(after.deliveries.map((each) => [each.id, each.attempts.length])).toEqual([[delivery!.id, 2]]);
    const ids = new Set(receiver.received.map((message) => message.headers['webhook-id']));
    expect(ids.size).toBe(1);
    expect(await errorOf(await admin('POST', `/webhooks/${webhook.id}/deliveries/${delivery!.id}/retry`))).toEqual([409, 'already_delivered']);
    expect(await errorOf(await admin('POST', `/webhooks/${webhook.id}/deliveries/00000000-0000-4000-8000-000000000000/retry`))).toEqual([404, 'not_found']);
  });

  test('disable, enable and delete: a disabled endpoint gets no events; delete takes its deliveries; each audited', async () => {
    const { webhook } = await create();
    const disabled = await admin('PATCH', `/webhooks/${webhook.id}`, { enabled: false });
    expect(((await disabled.json()) as { webhook: { enabled: boolean; disabledReason: string } }).webhook).toMatchObject({
      enabled: false,
      disabledReason: 'manual',
    });
    await register('quiet@example.com');
    await t.gatehouse.deliverWebhooks();
    expect(receiver.received).toHaveLength(0);
    expect(await errorOf(await admin('POST', `/webhooks/${webhook.id}/test`))).toEqual([409, 'webhook_disabled']);

    await admin('PATCH', `/webhooks/${webhook.id}`, { enabled: true, events: ['user.created'] });
    await register('loud@example.com');
    await t.gatehouse.deliverWebhooks();
    expect(typesReceived()).toEqual(['user.created']);

    expect((await admin('DELETE', `/webhooks/${webhook.id}`)).status).toBe(200);
    expect(await errorOf(await admin('GET', `/webhooks/${webhook.id}`))).toEqual([404, 'not_found']);
    const left = await sql<{ n: number }>`select count(*) as n from webhook_deliveries`.execute(t.database.kysely);
    expect(Number(left.rows[0]!.n)).toBe(0);
    const audit = await sql<{ event_type: string }>`select event_type from audit_events where event_type like 'webhook_%' order by id`.execute(
      t.database.kysely,
    );
    expect(audit.rows.map((row) => row.event_type)).toEqual(['webhook_created', 'webhook_updated', 'webhook_updated', 'webhook_deleted']);
  });

  test('without ENCRYPTION_KEY_BASE64 an endpoint cannot be created: 503 naming the variable', async () => {
    const bare = await createTestGatehouse(dialect, { env: { ADMIN_API_KEY: KEY } });
    try {
      const response = await bare.request('POST', '/api/admin/webhooks', {
        json: { url: receiver.url, events: ['*'] },
        headers: { authorization: `Bearer ${KEY}` },
      });
      expect(response.status).toBe(503);
      expect(((await response.json()) as { message: string }).message).toContain('ENCRYPTION_KEY_BASE64');
    } finally {
      await bare.close();
    }
  });
});
