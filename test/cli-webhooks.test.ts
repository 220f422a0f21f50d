/**
 * `gatehouse webhooks …`: the built CLI (`npm run build`) run as a process against a SQLite file
 * and a throwaway PostgreSQL schema — create (the secret printed once), list, test, the worker
 * alone delivering to a receiver that verifies with `standardwebhooks`, deliveries, rotate,
 * disable, delete; bad arguments exit 2 with the usage, refusals exit 1, never a stack trace.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TEST_JWT_SECRET } from './support/harness.js';
import { postgresUrl } from './support/services.js';
import { throwawaySchemaUrl } from './support/throwaway-schema.js';

const CLI = path.resolve('dist/cli.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const targets = [
  { name: 'SQLite file', kind: 'sqlite' as const, available: true },
  { name: 'PostgreSQL', kind: 'postgres' as const, available: postgresUrl !== null },
];

for (const target of targets) {
  describe.skipIf(!target.available)(`gatehouse webhooks [${target.name}]`, { timeout: 180_000 }, () => {
    const cleanups: (() => Promise<void>)[] = [];
    const received: { headers: Record<string, string>; body: string }[] = [];
    let receiverUrl = '';
    let env: Record<string, string>;

    const run = (...args: string[]): Promise<Run> =>
      new Promise((resolve) => {
        execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
          resolve({ code, stdout, stderr });
        });
      });
    const expectNoStack = (result: Run) => expect(result.stderr).not.toMatch(/\n\s+at /);

    beforeAll(async () => {
      const server = http.createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (chunk: string) => (body += chunk));
        req.on('end', () => {
          received.push({ headers: req.headers as Record<string, string>, body });
          res.statusCode = 204;
          res.end();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
      receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
      env = {
        JWT_SECRET: TEST_JWT_SECRET,
        ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'),
        LOG_LEVEL: 'silent',
        LOG_FORMAT: 'json',
        ENV_FILE: '/dev/null',
      };
      if (target.kind === 'sqlite') {
        const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cli-webhooks-'));
        cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
        env.DATABASE_URL = `sqlite:${path.join(dir, 'gatehouse.db')}`;
        env.DATA_DIR = dir;
      } else {
        env.DATABASE_URL = await throwawaySchemaUrl((cleanup) => cleanups.push(cleanup));
      }
    });
    afterAll(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    test('create, list, test, worker --once, deliveries, rotate-secret, disable, enable, delete', async () => {
      const created = await run('webhooks', 'create', '--url', receiverUrl, '--event', 'user.created', '--event', 'user.deleted', '--description', 'crm');
      expect([created.code, created.stderr]).toEqual([0, '']);
      const id = /Created webhook (\S+) for/.exec(created.stdout)?.[1];
      const secret = /(whsec_\S+)/.exec(created.stdout)?.[1];
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(secret).toMatch(/^whsec_/);

      const listed = await run('webhooks', 'list');
      expect(listed.stdout).toContain(`${id!}  enabled  ${receiverUrl}  user.created,user.deleted`);
      expect(listed.stdout).not.toContain(secret!);

      expect((await run('webhooks', 'test', id!)).code).toBe(0);
      const worker = await run('webhooks', 'worker', '--once');
      expect([worker.code, worker.stderr]).toEqual([0, '']);
      expect(received).toHaveLength(1);
      const event = new Webhook(secret!).verify(received[0]!.body, received[0]!.headers) as { type: string };
      expect(event.type).toBe('webhook.test');

      const deliveries = await run('webhooks', 'deliveries', id!);
      expect(deliveries.stdout).toMatch(/webhook\.test\s+delivered\s+1 attempts \((200|204) in \d+ ms/);

      const rotated = await run('webhooks', 'rotate-secret', id!);
      const newSecret = /(whsec_\S+)/.exec(rotated.stdout)?.[1];
      expect(newSecret).toMatch(/^whsec_/);
      expect(newSecret).not.toBe(secret);
      await run('webhooks', 'test', id!);
      await run('webhooks', 'worker', '--once');
      expect(received).toHaveLength(2);
      for (const key of [secret!, newSecret!]) expect(() => new Webhook(key).verify(received[1]!.body, received[1]!.headers)).not.toThrow();

      expect((await run('webhooks', 'disable', id!)).stdout).toContain('is disabled');
      expect((await run('webhooks', 'list')).stdout).toContain('disabled (manual)');
      expect((await run('webhooks', 'enable', id!)).stdout).toContain('is enabled');
      expect((await run('webhooks', 'delete', id!)).code).toBe(0);
      expect((await run('webhooks', 'list')).stdout.trim()).toBe('No webhook endpoints.');
    });

    test('bad arguments exit 2 with the usage; refusals exit 1 with the reason; never a stack trace', async () => {
      const noEvent = await run('webhooks', 'create', '--url', receiverUrl);
      expect(noEvent.code).toBe(2);
      expect(noEvent.stderr).toContain('Usage: gatehouse webhooks');
      const unknown = await run('webhooks', 'create', '--url', receiverUrl, '--event', 'user.nope');
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('--event: has unknown events: user.nope');
      const badUrl = await run('webhooks', 'create', '--url', 'ftp://example.com/', '--event', '*');
      expect(badUrl.code).toBe(1);
      const missing = await run('webhooks', 'delete', '00000000-0000-4000-8000-000000000000');
      expect([missing.code, missing.stderr.trim()]).toEqual([1, 'There is no webhook endpoint with this id.']);
      const notAnId = await run('webhooks', 'delete', 'nope');
      expect(notAnId.code).toBe(2);
      expect((await run('webhooks', 'frobnicate')).code).toBe(2);
      for (const result of [noEvent, unknown, badUrl, missing, notAnId]) expectNoStack(result);
    });
  });
}
