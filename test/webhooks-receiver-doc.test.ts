/**
 * The receiver of docs/webhooks.md, run as written: its code block becomes a file, runs as its
 * own process with the secret a real Gatehouse gave, and receives a sign-up's `user.created`
 * (verified by `standardwebhooks` inside it) exactly once, even when the same delivery comes twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, expect, test } from 'vitest';
import { freePort } from './support/free-port.js';
import { STRONG_PASSWORD, createTestGatehouse, type TestGatehouse } from './support/harness.js';

const KEY = 'receiver-doc-admin-key-0123456789abcdef';

function receiverSource(): string {
  const doc = readFileSync('docs/webhooks.md', 'utf8');
  const block = /```js\n(\/\/ receiver\.mjs[\s\S]*?)```/.exec(doc)?.[1];
  if (block === undefined) throw new Error('docs/webhooks.md has no receiver.mjs block');
  return block;
}

let t: TestGatehouse | undefined;
let child: ChildProcess | undefined;
const file = path.resolve('test-results', `receiver-${randomBytes(4).toString('hex')}.mjs`);
afterEach(async () => {
  child?.kill();
  rmSync(file, { force: true });
  await t?.close();
});

test('the documented receiver verifies a real delivery and handles each webhook-id once', { timeout: 60_000 }, async () => {
  t = await createTestGatehouse('sqlite', { env: { ADMIN_API_KEY: KEY, ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64') } });
  // The receiver checks the timestamp against its own clock: the gatehouse signs with real time here.
  t.clock.set(Date.now());
  const port = await freePort();
  const created = await t.request('POST', '/api/admin/webhooks', {
    json: { url: `http://127.0.0.1:${port}/`, events: ['user.created'] },
    headers: { authorization: `Bearer ${KEY}` },
  });
  const { secret } = (await created.json()) as { secret: string };

  // Inside the repository, so `standardwebhooks` resolves from its node_modules as it would in an app.
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, receiverSource());
  let output = '';
  child = spawn(process.execPath, [file], { env: { PATH: process.env.PATH ?? '', GATEHOUSE_WEBHOOK_SECRET: secret, PORT: String(port) } });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  for (
    let i = 0;
    i < 100 &&
    !(await fetch(`http://127.0.0.1:${port}/`, { method: 'POST' }).then(
      () => true,
      () => false,
    ));
    i++
  ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  expect((await t.request('POST', '/api/auth/register', { json: { email: 'doc@example.com', password: STRONG_PASSWORD } })).status).toBe(201);
  await t.gatehouse.deliverWebhooks();
  // The same delivery once more, as after a lost answer: the receiver sees the same webhook-id.
  await sql`update webhook_deliveries set status = 'pending', next_attempt_at = 0`.execute(t.database.kysely);
  await t.gatehouse.deliverWebhooks();

  const attempts = await sql<{ status_code: number }>`select status_code from webhook_delivery_attempts`.execute(t.database.kysely);
  expect(attempts.rows.map((row) => row.status_code)).toEqual([204, 204]);
  const lines = output.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^user\.created \{"userId":"[0-9a-f-]{36}","email":"doc@example\.com","method":"password","emailVerified":false\}$/);
});
