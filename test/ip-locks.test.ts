/**
 * Login locks of client addresses, which an operator can see and lift: GET /api/admin/ip-locks,
 * POST /api/admin/ip-locks/:ip/unlock and `gatehouse users ip-locks` / `users unlock --ip`, with
 * the limits counted in each store (this process's memory or PostgreSQL, and Redis). The lock's
 * answer says which lock holds without telling whether the account exists, and a refused sign-in
 * to a known account is kept against it in the audit trail.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createAdminStore } from '../src/db/admin-store.js';
import { usersCommand, type CliParts } from '../src/admin/cli.js';
import { openLimiterBackend, type LimiterBackend } from '../src/limits/limiter-backend.js';
import { createLoginLock } from '../src/limits/login-lock.js';
import { createLogger } from '../src/logger.js';
import { STRONG_PASSWORD, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';
import { redisUrl } from './support/services.js';

const KEY = 'admin-key-for-tests-0123456789-abcdefghij';
const SPRAYER = '198.51.100.66';
const OWNER_IP = '203.0.113.20';
const WRONG = 'Wrong-Password-1';

const stores = [{ name: 'default store', redis: false }, ...(redisUrl === null ? [] : [{ name: 'Redis', redis: true }])];

describeEachDialect('operators see and lift address locks', (dialect) => {
  for (const store of stores) {
    describe_(store.name, store.redis);
  }

  function describe_(name: string, withRedis: boolean): void {
    let t: TestGatehouse;
    let prefix: string;
    beforeEach(async () => {
      prefix = `gh-iplocks-${randomBytes(5).toString('hex')}`;
      t = await createTestGatehouse(dialect, {
        env: {
          ADMIN_API_KEY: KEY,
          RATE_LIMIT_LOGIN: '1000/15m',
          RATE_LIMIT_REGISTER: '1000/15m',
          ...(withRedis ? { REDIS_URL: redisUrl!, REDIS_KEY_PREFIX: prefix } : {}),
        },
      });
    });
    afterEach(async () => {
      await t.close();
    });

    const admin = (method: string, path: string) => t.request(method, `/api/admin${path}`, { ip: '192.0.2.50', headers: { authorization: `Bearer ${KEY}` } });
    const login = (email: string, password: string, ip: string) => t.request('POST', '/api/auth/login', { json: { email, password }, ip });
    const register = async (email: string) => {
      expect((await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD }, ip: '192.0.2.99' })).status).toBe(201);
      return (await t.gatehouse.stores.users.findUserByEmail(email))!.id;
    };
    /** Five wrong passwords from one address, each for another (unknown) email: the address alone is locked. */
    const sprayFrom = async (ip: string) => {
      for (let i = 0; i < 5; i++) expect((await login(`nobody${i}@example.com`, WRONG, ip)).status).toBe(401);
    };

    test(`[${name}] an address lock is listed, refuses the right password from it alone, and is lifted (audited)`, async () => {
      await register('owner@example.com');
      await sprayFrom(SPRAYER);
      const refused = await login('owner@example.com', STRONG_PASSWORD, SPRAYER);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toMatchObject({ error: 'account_locked', message: expect.stringMatching(/network address/) });
      // Anyone else, elsewhere, is not held by that address's lock.
      expect((await login('owner@example.com', STRONG_PASSWORD, OWNER_IP)).status).toBe(200);

      expect(await (await admin('GET', '/ip-locks')).json()).toEqual({ locks: [{ ip: SPRAYER, secondsLeft: 900 }] });
      t.clock.advance(100_000);
      expect(await (await admin('GET', '/ip-locks')).json()).toEqual({ locks: [{ ip: SPRAYER, secondsLeft: 800 }] });

      const unlocked = await admin('POST', `/ip-locks/${SPRAYER}/unlock`);
      expect([unlocked.status, await unlocked.json()]).toEqual([200, { wasLocked: true }]);
      expect(await (await admin('GET', '/ip-locks')).json()).toEqual({ locks: [] });
      expect((await login('owner@example.com', STRONG_PASSWORD, SPRAYER)).status).toBe(200);
      expect(await (await admin('POST', `/ip-locks/${SPRAYER}/unlock`)).json()).toEqual({ wasLocked: false });

      const { events } = await (await admin('GET', '/audit?type=admin_ip_unlocked')).json();
      expect(events.map((event: { userId: unknown; metadata: unknown }) => [event.userId, event.metadata])).toEqual([
        [null, { actor: 'admin', ip: SPRAYER, wasLocked: false }],
        [null, { actor: 'admin', ip: SPRAYER, wasLocked: true }],
      ]);
    });

    test(`[${name}] a lock ends by itself and leaves the list; IPv6 addresses are listed and lifted too`, async () => {
      await sprayFrom('2001:db8::7');
      await sprayFrom(SPRAYER);
      t.clock.advance(60_000);
      expect(await (await admin('GET', '/ip-locks')).json()).toEqual({
        locks: expect.arrayContaining([
          { ip: '2001:db8::7', secondsLeft: 840 },
          { ip: SPRAYER, secondsLeft: 840 },
        ]),
      });
      expect(await (await admin('POST', `/ip-locks/${encodeURIComponent('2001:DB8::7')}/unlock`)).json()).toEqual({ wasLocked: true });
      expect(await (await admin('GET', '/ip-locks')).json()).toEqual({ locks: [{ ip: SPRAYER, secondsLeft: 840 }] });
      t.clock.advance(840_000);
      expect(await (await admin('GET', '/ip-locks')).json()).toEqual({ locks: [] });
    });

    test(`[${name}] not an address: 400 validation_error, nothing audited`, async () => {
      for (const bad of ['not-an-ip', '999.1.1.1', '1.2.3', '..1', encodeURIComponent('a b')]) {
        const response = await admin('POST', `/ip-locks/${bad}/unlock`);
        expect([response.status, (await response.json()).error], bad).toEqual([400, 'validation_error']);
      }
      expect((await (await admin('GET', '/audit?type=admin_ip_unlocked')).json()).events).toEqual([]);
    });

    test(`[${name}] an account lock says so, the same for an unknown email, and its refusals are kept against the account`, async () => {
      const id = await register('kept@example.com');
      // Five addresses, one failure each: the email is locked, no address is.
      for (let i = 0; i < 5; i++) await login('kept@example.com', WRONG, `198.51.100.${10 + i}`);
      for (let i = 0; i < 5; i++) await login('ghost@example.com', WRONG, `198.51.100.${20 + i}`);
      const known = await login('kept@example.com', STRONG_PASSWORD, OWNER_IP);
      const unknown = await login('ghost@example.com', STRONG_PASSWORD, OWNER_IP);
      const [knownBody, unknownBody] = [await known.json(), await unknown.json()];
      expect([known.status, unknown.status]).toEqual([429, 429]);
      expect(knownBody).toEqual(unknownBody);
      expect(knownBody.message).toMatch(/this email address/);
      expect(known.headers.get('retry-after')).toBe(unknown.headers.get('retry-after'));
      expect(await (await admin('GET', '/ip-locks')).json()).toEqual({ locks: [] });

      const { events } = await (await admin('GET', `/audit?type=login_failure&userId=${id}`)).json();
      expect(events.map((event: { metadata: { reason: string } }) => event.metadata.reason)).toEqual(['locked', ...Array(5).fill('wrong_password')]);
    });

    // A shared store only: the command's own connection reads what the server wrote (nothing of
    // the server's memory), so a list kept only in memory would fail here.
    if (withRedis || dialect === 'postgres') {
      test(`[${name}] the command line lists and lifts the locks the server counted`, async () => {
        await sprayFrom(SPRAYER);
        // As `gatehouse users …` does in its own process: its own connection to the same store.
        const backend: LimiterBackend = await openLimiterBackend({
          redisUrl: withRedis ? redisUrl! : null,
          redisTimeoutMs: 1000,
          postgresPool: t.database.postgresPool,
          keyPrefix: prefix,
          logger: createLogger({ level: 'silent' }),
        });
        const out: string[] = [];
        const parts: CliParts = {
          deps: { stores: t.gatehouse.stores, admin: createAdminStore(t.database.kysely), loginLock: createLoginLock(backend, t.gatehouse.config.lockout) },
          limiterKind: backend.kind,
          now: () => t.clock.now(),
          out: (line) => out.push(line),
          err: (line) => out.push(`err: ${line}`),
        };
        try {
          await usersCommand(parts, ['ip-locks', '--format', 'ndjson']);
          expect(out.map((line) => JSON.parse(line))).toEqual([{ ip: SPRAYER, secondsLeft: 900 }]);
          out.length = 0;
          await usersCommand(parts, ['unlock', '--ip', SPRAYER]);
          expect(out).toEqual([`Unlocked the address ${SPRAYER}.`]);
          await expect(usersCommand(parts, ['unlock', '--ip', 'nope'])).rejects.toThrow(/--ip: must be an IPv4 or IPv6 address/);
          // An account that was not locked: the operator is pointed at the address locks.
          await register('asks@example.com');
          out.length = 0;
          await usersCommand(parts, ['unlock', 'asks@example.com']);
          expect(out).toEqual([expect.stringMatching(/^asks@example\.com was not locked; .*gatehouse users ip-locks$/)]);
        } finally {
          await backend.close();
        }
        expect((await login('nobody0@example.com', WRONG, SPRAYER)).status).toBe(401);
        const { events } = await (await admin('GET', '/audit?type=admin_ip_unlocked')).json();
        expect(events).toEqual([expect.objectContaining({ userId: null, metadata: { actor: 'cli', ip: SPRAYER, wasLocked: true } })]);
      });
    }
  }
});
