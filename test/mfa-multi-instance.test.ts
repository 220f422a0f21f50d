/**
 * A TOTP code works once across instances: two server processes (the built CLI) on one
 * PostgreSQL and one Redis each get the same code at the same moment, for two challenges of one
 * account; exactly one signs in. Skipped with a message when PostgreSQL or Redis does not answer.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach, describe, expect, test } from 'vitest';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { postgresUrl, redisUrl } from './support/services.js';
import { throwawaySchemaUrl } from './support/throwaway-schema.js';
import { totp } from './support/totp-oracle.js';

const PASSWORD = 'Correct-Horse-9';
const servers: ServerProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function cookieOf(response: Response, name: string): string {
  const header = response.headers.getSetCookie().find((value) => value.startsWith(`${name}=`));
  if (header === undefined) throw new Error(`no ${name} cookie`);
  return header.split(';')[0]!;
}

const post = (url: string, path: string, body: unknown, cookie?: string): Promise<Response> =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) }, body: JSON.stringify(body) });

describe.skipIf(postgresUrl === null || redisUrl === null)('two-factor across two server processes', () => {
  test('on one PostgreSQL and one Redis: one code sent to both instances at once signs in exactly once', async () => {
    const env = {
      BCRYPT_ROUNDS: '4',
      JWT_SECRET: 'q'.repeat(40),
      ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'),
      DATABASE_URL: await throwawaySchemaUrl((cleanup) => cleanups.push(cleanup)),
      REDIS_URL: redisUrl!,
      REDIS_KEY_PREFIX: `gh-mfa-${randomBytes(4).toString('hex')}`,
    };
    const [a, b] = await Promise.all([startServerProcess({ cwd: process.cwd(), env }), startServerProcess({ cwd: process.cwd(), env })]);
    servers.push(a, b);
    const session = cookieOf(await post(a.url, '/api/auth/register', { email: 'twin@example.com', password: PASSWORD }), 'gatehouse_session');
    // Two-factor needs a verified address; the link would come by email, so mark it in the database.
    const db = new pg.Client({ connectionString: env.DATABASE_URL });
    await db.connect();
    await db.query("update users set email_verified = 1 where email = 'twin@example.com'");
    await db.end();
    const { secret } = await (await post(a.url, '/api/auth/2fa/totp/setup', { currentPassword: PASSWORD }, session)).json();
    // Enable with the previous step's code, so the current step is still unspent.
    expect((await post(a.url, '/api/auth/2fa/totp/enable', { code: totp(secret, Date.now(), -1) }, session)).status).toBe(200);

    const challengeA = cookieOf(await post(a.url, '/api/auth/login', { email: 'twin@example.com', password: PASSWORD }), 'gatehouse_mfa');
    const challengeB = cookieOf(await post(b.url, '/api/auth/login', { email: 'twin@example.com', password: PASSWORD }), 'gatehouse_mfa');
    const code = totp(secret, Date.now());
    const answers = await Promise.all([post(a.url, '/api/auth/2fa/verify', { code }, challengeA), post(b.url, '/api/auth/2fa/verify', { code }, challengeB)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401]);
  }, 60_000);
});
