/**
 * `gatehouse clients …` and `gatehouse keys …` through the commands' own `run(config, args)`, as
 * src/cli.ts calls them, against a SQLite file and a throwaway PostgreSQL schema: what they print,
 * what they leave in the database (no usable secret, sealed private keys the configured key
 * opens, audit rows with actor cli), and their refusals (usage errors apart from refused values).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { UsageError } from '../src/admin/cli.js';
import { loadConfig, type Config } from '../src/config.js';
import { createEnvelope } from '../src/crypto/envelope.js';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../src/db/connect.js';
import { createOidcKeyStore } from '../src/db/oidc-key-store.js';
import { AppError } from '../src/errors.js';
import { OIDC_COMMANDS } from '../src/oidc-provider/cli.js';
import { hashClientSecret } from '../src/oidc-provider/clients.js';
import { activeJwks } from '../src/oidc-provider/keys.js';
import { TEST_JWT_SECRET } from './support/harness.js';
import { postgresUrl } from './support/services.js';
import { throwawaySchemaUrl } from './support/throwaway-schema.js';

interface Run {
  out: string;
  error: unknown;
}

const targets = [
  { name: 'SQLite file', kind: 'sqlite' as const, available: true },
  { name: 'PostgreSQL', kind: 'postgres' as const, available: postgresUrl !== null },
];

const command = (name: string) => OIDC_COMMANDS.find((each) => each.name === name)!;

for (const target of targets) {
  describe.skipIf(!target.available)(`gatehouse clients and keys [${target.name}]`, { timeout: 60_000 }, () => {
    const cleanups: (() => Promise<void>)[] = [];
    const encryptionKey = randomBytes(32);
    let config: Readonly<Config>;
    let database: DatabaseHandle;

    const run = async (...args: string[]): Promise<Run> => {
      const lines: string[] = [];
      const spy = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
      try {
        const [name = '', ...rest] = args;
        await command(name).run(config, rest);
        return { out: lines.join('\n'), error: null };
      } catch (error) {
        return { out: lines.join('\n'), error };
      } finally {
        spy.mockRestore();
      }
    };
    const ok = async (...args: string[]): Promise<string> => {
      const result = await run(...args);
      expect(result.error).toBeNull();
      return result.out;
    };
    const refusal = async (...args: string[]): Promise<{ kind: 'usage' | string; message: string }> => {
      const { error } = await run(...args);
      if (error instanceof UsageError) return { kind: 'usage', message: error.message };
      if (error instanceof AppError) return { kind: error.code, message: error.message };
      throw new Error(`expected a refusal, got ${String(error)}`);
    };
    const auditRows = async (like: string) =>
      (
        await sql<{ event_type: string; metadata: string }>`select event_type, metadata from audit_events where event_type like ${like} order by id`.execute(
          database.kysely,
        )
      ).rows.map((row) => ({ type: row.event_type, metadata: JSON.parse(row.metadata) as Record<string, unknown> }));

    beforeAll(async () => {
      const env: Record<string, string> = {
        JWT_SECRET: TEST_JWT_SECRET,
        ENCRYPTION_KEY_BASE64: encryptionKey.toString('base64'),
        LOG_LEVEL: 'silent',
        OIDC_KEY_ROTATION_DELAY: '1h',
      };
      if (target.kind === 'sqlite') {
        const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cli-oidc-'));
        cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
        env.DATABASE_URL = `sqlite:${path.join(dir, 'gatehouse.db')}`;
        env.DATA_DIR = dir;
      } else {
        env.DATABASE_URL = await throwawaySchemaUrl((cleanup) => cleanups.push(cleanup));
      }
      config = loadConfig(env);
      database = openDatabase(config.database);
      await migrateToLatest(database);
      cleanups.push(() => database.close());
    });
    afterAll(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    test('clients: create (secret once, only its hash kept), list, show, update, rotate-secret, delete', async () => {
      const created = await ok(
        'clients',
        'create',
        '--name',
        'Billing',
        '--redirect-uri',
        'https://billing.example.com/callback',
        '--redirect-uri',
        'http://127.0.0.1/callback',
        '--scope',
        'email',
        '--backchannel-logout-uri',
        'https://billing.example.com/logout',
      );
      const id = /^client_id: (\S+)$/m.exec(created)?.[1];
      const secret = /^client_secret: (\S+)$/m.exec(created)?.[1];
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(created).toContain('shown once');

      const rows = await sql<{ secret_hash: string }>`select * from oidc_clients`.execute(database.kysely);
      expect(JSON.stringify(rows.rows)).not.toContain(secret!);
      expect(rows.rows[0]!.secret_hash).toBe(hashClientSecret(secret!));

      const listed = await ok('clients', 'list');
      expect(listed).toBe(`${id!}  confidential  Billing  https://billing.example.com/callback http://127.0.0.1/callback`);
      const shown = await ok('clients', 'show', id!);
      expect(shown).toContain('grant_types: authorization_code refresh_token');
      expect(shown).toContain('scopes: email openid');
      expect(shown).toContain('backchannel_logout_uri: https://billing.example.com/logout');
      expect(shown).toContain('id_token_signed_response_alg: ES256');
      for (const text of [listed, shown]) expect(text).not.toContain(secret!);

      const updated = await ok(
        'clients',
        'update',
        id!,
        '--name',
        'Billing 2',
        '--redirect-uri',
        'https://new.example.com/cb',
        '--first-party',
        '--id-token-alg',
        'RS256',
        '--no-backchannel-logout-uri',
      );
      expect(updated).toContain('name: Billing 2');
      expect(updated).toContain('redirect_uris: https://new.example.com/cb\n');
      expect(updated).toContain('first party');
      expect(updated).toContain('id_token_signed_response_alg: RS256');
      expect(updated).toContain('backchannel_logout_uri: -');
      expect(await ok('clients', 'update', id!, '--no-first-party')).not.toContain('first party');

      const rotated = await ok('clients', 'rotate-secret', id!);
      const newSecret = /^client_secret: (\S+)$/m.exec(rotated)?.[1];
      expect(newSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(newSecret).not.toBe(secret);
      const after = await sql<{ secret_hash: string }>`select secret_hash from oidc_clients`.execute(database.kysely);
      expect(after.rows[0]!.secret_hash).toBe(hashClientSecret(newSecret!));

      expect(await ok('clients', 'delete', id!)).toContain(`Deleted client ${id!}`);
      expect(await ok('clients', 'list')).toBe('No clients.');
      expect(await refusal('clients', 'show', id!)).toEqual({ kind: 'not_found', message: 'There is no client with this id.' });

      const audit = await auditRows('oidc_client_%');
      expect(audit.map((row) => row.type)).toEqual([
        'oidc_client_created',
        'oidc_client_updated',
        'oidc_client_updated',
        'oidc_client_secret_rotated',
        'oidc_client_deleted',
      ]);
      for (const row of audit) expect(row.metadata).toMatchObject({ actor: 'cli', clientId: id });
      expect(JSON.stringify(audit)).not.toContain(secret!);
      expect(JSON.stringify(audit)).not.toContain(newSecret!);
    });

    test('clients: a public client has no secret; refusals name the option; bad usage is a usage error', async () => {
      const created = await ok(
        'clients',
        'create',
        '--name',
        'Mobile',
        '--public',
        '--redirect-uri',
        'com.example.app:/callback',
        '--grant',
        'authorization_code',
      );
      expect(created).toContain('Created public client "Mobile".');
      expect(created).not.toContain('client_secret');
      const id = /^client_id: (\S+)$/m.exec(created)![1]!;
      expect((await refusal('clients', 'rotate-secret', id)).kind).toBe('validation_error');

      const publicCredentials = await refusal('clients', 'create', '--name', 'X', '--public', '--grant', 'client_credentials');
      expect(publicCredentials).toMatchObject({ kind: 'validation_error' });
      expect(publicCredentials.message).toContain('--grant: client_credentials needs a confidential client');
      const fragment = await refusal('clients', 'create', '--name', 'X', '--redirect-uri', 'https://a.example/cb', '--redirect-uri', 'https://a.example/cb#x');
      expect(fragment.message).toContain('--redirect-uri #2: a fragment is refused');
      const script = await refusal('clients', 'create', '--name', 'X', '--redirect-uri', 'javascript:alert(1)');
      expect(script).toMatchObject({ kind: 'validation_error' });

      const unknownGrant = await refusal('clients', 'create', '--name', 'X', '--grant', 'password');
      expect(unknownGrant.kind).toBe('usage');
      expect(unknownGrant.message).toContain('--grant');
      expect(await refusal('clients', 'create', '--redirect-uri', 'https://a.example/cb')).toMatchObject({ kind: 'usage' });
      expect(await refusal('clients', 'create', '--name', 'X', '--bogus')).toMatchObject({ kind: 'usage' });
      expect(await refusal('clients', 'update', id, '--public')).toMatchObject({ kind: 'usage' });
      expect(await refusal('clients', 'update', id)).toMatchObject({ kind: 'usage' });
      expect(await refusal('clients', 'show')).toMatchObject({ kind: 'usage' });
      expect(await refusal('clients', 'frobnicate')).toMatchObject({ kind: 'usage' });
      expect(await refusal('clients')).toMatchObject({ kind: 'usage' });
      await ok('clients', 'delete', id);
    });

    test('keys: list, rotate (pending, then --now signing), retire; the last key of an algorithm stays', async () => {
      expect(await ok('keys', 'list')).toContain('No signing keys');

      const before = Date.now();
      const pending = await ok('keys', 'rotate');
      const pendingKids = [...pending.matchAll(/^New (ES256|RS256) key (\S+)$/gm)].map((match) => ({ alg: match[1]!, kid: match[2]! }));
      expect(pendingKids.map((key) => key.alg).sort()).toEqual(['ES256', 'RS256']);
      const from = Date.parse(/sign from (\S+)\./.exec(pending)![1]!);
      expect(from - before).toBeGreaterThanOrEqual(3_600_000 - 1_000);
      expect(from - before).toBeLessThan(3_600_000 + 60_000);
      for (const key of pendingKids)
        expect(await ok('keys', 'list')).toMatch(new RegExp(`^${key.kid}  ${key.alg}  created \\S+  signs from \\S+  pending$`, 'm'));

      const signing = await ok('keys', 'rotate', '--now');
      expect(signing).toContain('they sign now');
      const signingKids = [...signing.matchAll(/^New (ES256|RS256) key (\S+)$/gm)].map((match) => ({ alg: match[1]!, kid: match[2]! }));
      const listed = await ok('keys', 'list');
      for (const key of signingKids) expect(listed).toMatch(new RegExp(`^${key.kid}  ${key.alg}  .*  signing$`, 'm'));

      // The private keys are sealed with the configured key: the servers can sign with them.
      const stored = await createOidcKeyStore(database.kysely).listKeys();
      expect(activeJwks(stored, createEnvelope([encryptionKey]), new Date()).map((jwk) => jwk.kid)).toHaveLength(4);
      expect(JSON.stringify(stored.map((key) => key.privateJwkSealed))).not.toMatch(/"d"/);

      const es256 = pendingKids.find((key) => key.alg === 'ES256')!.kid;
      const lastEs256 = signingKids.find((key) => key.alg === 'ES256')!.kid;
      expect(await ok('keys', 'retire', es256)).toContain(`Retired key ${es256}`);
      expect(await ok('keys', 'list')).toMatch(new RegExp(`^${es256}  ES256  .*  retired \\S+$`, 'm'));
      const last = await refusal('keys', 'retire', lastEs256);
      expect(last.kind).toBe('validation_error');
      expect(last.message).toContain('last ES256 key');
      expect(await refusal('keys', 'retire', es256)).toMatchObject({ kind: 'not_found' });
      expect(await refusal('keys', 'retire')).toMatchObject({ kind: 'usage' });
      expect(await refusal('keys', 'rotate', 'extra')).toMatchObject({ kind: 'usage' });
      expect(await refusal('keys', 'shred')).toMatchObject({ kind: 'usage' });

      const audit = await auditRows('oidc_key%');
      expect(audit.map((row) => row.type)).toEqual(['oidc_keys_rotated', 'oidc_keys_rotated', 'oidc_key_retired']);
      expect(audit[0]!.metadata).toMatchObject({ actor: 'cli', kids: pendingKids.map((key) => key.kid).join(',') });
      expect(audit[2]!.metadata).toMatchObject({ actor: 'cli', kid: es256, alg: 'ES256' });
    });
  });
}
