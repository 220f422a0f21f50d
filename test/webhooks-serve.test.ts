/**
 * Webhooks as an operator runs them: `gatehouse serve` delivers by itself within seconds (no
 * call from a test), says so in its start banner, and two server processes sharing one
 * PostgreSQL database deliver every event exactly once between them, counted by `webhook-id`
 * at a receiver that verifies each signature with `standardwebhooks`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { STRONG_PASSWORD, TEST_JWT_SECRET } from './support/harness.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { postgresUrl } from './support/services.js';
import { throwawaySchemaUrl } from './support/throwaway-schema.js';

const ADMIN_KEY = 'serve-webhooks-admin-key-0123456789abcdef';

interface Receiver {
  url: string;
  /** Verified events by webhook-id: how many times each arrived, and its type. */
  seen: Map<string, { count: number; type: string }>;
  unverified: number;
  secret: { value: string };
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const seen = new Map<string, { count: number; type: string }>();
  const secret = { value: '' };
  const receiver = { seen, unverified: 0, secret } as Receiver;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      try {
        const event = new Webhook(secret.value).verify(body, req.headers as Record<string, string>) as { type: string };
        const id = req.headers['webhook-id'] as string;
        seen.set(id, { count: (seen.get(id)?.count ?? 0) + 1, type: event.type });
        res.statusCode = 204;
      } catch {
        receiver.unverified++;
        res.statusCode = 400;
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}

async function waitFor(what: string, done: () => boolean, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const post = (url: string, pathname: string, json: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(json) });

const targets = [
  { name: 'SQLite file, one server', kind: 'sqlite' as const, instances: 1, available: true },
  { name: 'PostgreSQL, two servers', kind: 'postgres' as const, instances: 2, available: postgresUrl !== null },
];

for (const target of targets) {
  describe.skipIf(!target.available)(`gatehouse serve delivers webhooks [${target.name}]`, { timeout: 120_000 }, () => {
    const cleanups: (() => Promise<void>)[] = [];
    const servers: ServerProcess[] = [];
    let receiver: Receiver;

    beforeAll(async () => {
      receiver = await startReceiver();
      cleanups.push(() => receiver.close());
      const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-serve-webhooks-'));
      cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
      const env: Record<string, string> = {
        JWT_SECRET: TEST_JWT_SECRET,
        BCRYPT_ROUNDS: '4',
        ADMIN_API_KEY: ADMIN_KEY,
        ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'),
        RATE_LIMIT_REGISTER: '10000/15m',
        RATE_LIMIT_ADMIN: '10000/1m',
        DATA_DIR: dir,
        DATABASE_URL: target.kind === 'sqlite' ? `sqlite:${path.join(dir, 'gatehouse.db')}` : await throwawaySchemaUrl((cleanup) => cleanups.push(cleanup)),
      };
      // One server migrates first; the second starts on the migrated database.
      for (let i = 0; i < target.instances; i++) servers.push(await startServerProcess({ env, cwd: dir }));
    });
    afterAll(async () => {
      for (const server of servers) await server.stop();
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    test('every sign-up reaches the receiver once, signed, without any call but the sign-ups', async () => {
      const [first] = servers;
      const created = await post(first!.url, '/api/admin/webhooks', { url: receiver.url, events: ['user.created'] }, { authorization: `Bearer ${ADMIN_KEY}` });
      expect(created.status).toBe(201);
      receiver.secret.value = ((await created.json()) as { secret: string }).secret;

      const people = 40;
      const answers = await Promise.all(
        Array.from({ length: people }, (_, i) =>
          post(servers[i % servers.length]!.url, '/api/auth/register', { email: `person${i}@example.com`, password: STRONG_PASSWORD }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: people }, () => 201));

      await waitFor(`${people} user.created events`, () => receiver.seen.size >= people);
      // A moment more: a second copy of any event would arrive now.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(receiver.unverified).toBe(0);
      expect(receiver.seen.size).toBe(people);
      expect([...receiver.seen.values()].every((entry) => entry.count === 1 && entry.type === 'user.created')).toBe(true);
    });

    test('the start banner says how many endpoints there are and who delivers', async () => {
      // Written at start: the endpoint did not exist yet, so the count was 0.
      expect(servers[0]!.output()).toContain("Webhooks: no endpoint registered (gatehouse webhooks create --url URL --event '*')");
    });
  });
}
