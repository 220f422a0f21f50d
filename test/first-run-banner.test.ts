/** The start banner as a pure function of the configuration: what each line says, and that no secret is in any. */
import { describe, expect, test } from 'vitest';
import { describeServerAddress, startBanner, type BannerLine } from '../src/banner.js';
import { webhookLine } from '../src/webhooks/banner.js';
import { loadConfig } from '../src/config.js';

const LISTENING = /listening on (http:\/\/[^\s"]+)/;
const KEY = Buffer.alloc(32, 7).toString('base64');
const everything = (lines: BannerLine[]): string => JSON.stringify(lines);

describe('startBanner()', () => {
  test('two-factor and OpenID Connect: a generated key needs no line (its warning says it); each OIDC provider is on with its redirect URI, or off naming what is missing', () => {
    const generated = { ...loadConfig({}), generatedEncryptionKey: Buffer.alloc(32, 1) };
    expect(startBanner(generated, 'http://127.0.0.1:1', 1).some((line) => line.message.startsWith('Two-factor sign-in'))).toBe(false);
    const lines = startBanner(
      loadConfig({
        OIDC_PROVIDERS: 'gitlab,acme',
        OIDC_GITLAB_CLIENT_ID: 'gl-id',
        OIDC_GITLAB_CLIENT_SECRET: 'gl-secret-value',
        OIDC_ACME_ISSUER: 'https://id.acme.example',
        AUTH_SECRET: 'a'.repeat(24),
        ENCRYPTION_KEY_BASE64: Buffer.alloc(32, 2).toString('base64'),
      }),
      'http://127.0.0.1:1',
      1,
    );
    expect(lines.find((line) => line.message.startsWith('Sign in with GitLab'))?.message).toBe(
      "Sign in with GitLab is on (OpenID Connect; its client's redirect URI must be http://localhost:3000/api/auth/callback/gitlab)",
    );
    const acme = lines.find((line) => (line.details as { capability?: string }).capability === 'oidc:acme');
    expect(acme?.level).toBe('warn');
    expect(acme?.message).toMatch(/^Sign in with .* is off: .*OIDC_ACME_CLIENT_ID/);
    expect(lines.some((line) => line.message.startsWith('Two-factor sign-in'))).toBe(false);
  });

  test('the defaults: where it listens, the address to open with its /register and /login, the database, and what is off', () => {
    const lines = startBanner(loadConfig({ PORT: '3000' }), 'http://127.0.0.1:3000', 42);
    expect(lines.map((line) => line.message)).toEqual([
      'Gatehouse listening on http://127.0.0.1:3000 (mode: default, database: sqlite)',
      'Open http://localhost:3000 in a browser: http://localhost:3000/register to create an account, http://localhost:3000/login to sign in',
      expect.stringMatching(/^Database: SQLite file \/.*\/data\/gatehouse\.db\. Data folder: \/.*\/data$/),
      "Limits and locks count in this process's memory: each instance counts its own and a restart forgets them; set REDIS_URL to share them",
      'Sign in with GitHub is off: set GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET, AUTH_SECRET, ENCRYPTION_KEY_BASE64 to turn it on',
      'Two-factor sign-in is off: set ENCRYPTION_KEY_BASE64 (openssl rand -base64 32) to turn it on',
      'Email delivery is off: emails are printed to this console instead; set SMTP_URL to send them',
    ]);
    expect(lines.every((line) => line.level === 'info')).toBe(true);
    expect(lines[0]?.details).toEqual({ url: 'http://127.0.0.1:3000', baseUrl: 'http://localhost:3000', mode: 'default', database: 'sqlite', startupMs: 42 });
    // What the bench and the test helpers read: the bound address, not BASE_URL.
    expect(LISTENING.exec(lines[0]?.message ?? '')?.[1]).toBe('http://127.0.0.1:3000');
  });

  test('BASE_URL is the address to open; the listening line keeps the bound one', () => {
    const lines = startBanner(loadConfig({ BASE_URL: 'https://auth.example.com' }), 'http://[::1]:8080', 1);
    expect(lines[0]?.message).toBe('Gatehouse listening on http://[::1]:8080 (mode: default, database: sqlite)');
    expect(lines[1]?.message).toBe(
      'Open https://auth.example.com in a browser: https://auth.example.com/register to create an account, https://auth.example.com/login to sign in',
    );
  });

  test('Sign in with GitHub: on names its callback; half set up is one warning naming what is wrong', () => {
    const on = startBanner(
      loadConfig({
        BASE_URL: 'https://auth.example.com',
        GITHUB_CLIENT_ID: 'id',
        GITHUB_CLIENT_SECRET: 's',
        AUTH_SECRET: 'a'.repeat(16),
        ENCRYPTION_KEY_BASE64: KEY,
      }),
      'http://127.0.0.1:1',
      1,
    );
    expect(on.find((line) => line.message.startsWith('Sign in with GitHub'))).toEqual({
      level: 'info',
      message: "Sign in with GitHub is on (the GitHub OAuth app's callback URL must be https://auth.example.com/api/auth/callback/github)",
      details: { capability: 'github', state: 'on', callback: 'https://auth.example.com/api/auth/callback/github' },
    });

    const half = startBanner(loadConfig({ GITHUB_CLIENT_ID: 'id', AUTH_SECRET: 'short' }), 'http://127.0.0.1:1', 1);
    const github = half.filter((line) => line.message.includes('GitHub'));
    expect(github).toHaveLength(1);
    expect(github[0]?.level).toBe('warn');
    expect(github[0]?.message).toBe(
      'Sign in with GitHub is off: GITHUB_CLIENT_SECRET must be set; AUTH_SECRET must be at least 16 characters; ENCRYPTION_KEY_BASE64 must be set (base64 of 32 random bytes)',
    );
  });

  test('GitHub: the variables other capabilities share (AUTH_SECRET, ENCRYPTION_KEY_BASE64) do not make a GitHub warning; GITHUB_CLIENT_ID alone does', () => {
    const shared = startBanner(loadConfig({ AUTH_SECRET: 'a'.repeat(24), ENCRYPTION_KEY_BASE64: KEY }), 'http://127.0.0.1:1', 1);
    const line = shared.find((entry) => entry.message.includes('GitHub'));
    expect(line?.level).toBe('info');
    expect(line?.message).toBe('Sign in with GitHub is off: set GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET, AUTH_SECRET, ENCRYPTION_KEY_BASE64 to turn it on');
    const meant = startBanner(loadConfig({ GITHUB_CLIENT_ID: 'id', AUTH_SECRET: 'a'.repeat(24), ENCRYPTION_KEY_BASE64: KEY }), 'http://127.0.0.1:1', 1);
    expect(meant.find((entry) => entry.message.includes('GitHub'))).toMatchObject({
      level: 'warn',
      message: 'Sign in with GitHub is off: GITHUB_CLIENT_SECRET must be set',
    });
  });

  test('where limits count: Redis host, database and prefix (never its password), PostgreSQL, or memory', () => {
    const limitsOf = (env: Record<string, string>) => startBanner(loadConfig(env), 'http://127.0.0.1:1', 1).find((line) => line.message.startsWith('Limits'));
    const redis = limitsOf({ REDIS_URL: 'redis://:hunter2@cache.internal:6380/2', REDIS_KEY_PREFIX: 'auth-prod' });
    expect(redis?.message).toBe(
      'Limits and locks count in Redis at cache.internal:6380, database 2, keys under auth-prod: (shared by every instance using it)',
    );
    expect(redis?.details).toEqual({ limits: 'redis', server: 'cache.internal:6380', db: 2, prefix: 'auth-prod' });
    expect(JSON.stringify(redis)).not.toContain('hunter2');
    expect(limitsOf({ REDIS_URL: 'redis://127.0.0.1:6379' })?.message).toContain('at 127.0.0.1:6379, database 0, keys under gatehouse:');
    expect(limitsOf({ DATABASE_URL: 'postgres://u:p@db.internal:5432/auth' })?.message).toBe(
      'Limits and locks count in PostgreSQL (shared by every instance on this database)',
    );
  });

  test('email: SMTP without its credentials, the worker split, and nothing in production without SMTP (createGatehouse warns there)', () => {
    const smtp = startBanner(loadConfig({ SMTP_URL: 'smtps://mailer:hunter2@mail.example.com:465' }), 'http://127.0.0.1:1', 1);
    expect(smtp.at(-1)?.message).toBe('Email delivery is on: over SMTP to mail.example.com:465, by this server');
    const worker = startBanner(loadConfig({ SMTP_URL: 'smtp://mail.example.com:587', MAIL_DELIVERY: 'worker' }), 'http://127.0.0.1:1', 1);
    expect(worker.at(-1)?.message).toBe(
      'Email delivery is on: over SMTP to mail.example.com:587, by `gatehouse mail` workers (MAIL_DELIVERY=worker); this server only queues them',
    );
    const production = startBanner(
      loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), BASE_URL: 'https://auth.example.com', METRICS_PUBLIC: 'true' }),
      'http://127.0.0.1:1',
      1,
    );
    expect(production.some((line) => /email/i.test(line.message))).toBe(false);
  });

  test('email without SMTP: printed with a loopback BASE_URL; with any other, outside production, queued and not printed, and the banner says why', () => {
    for (const baseUrl of [undefined, 'http://127.0.0.1:3000', 'http://[::1]:3000']) {
      const lines = startBanner(loadConfig(baseUrl === undefined ? {} : { BASE_URL: baseUrl }), 'http://127.0.0.1:3000', 1);
      const email = lines.find((line) => (line.details as { capability?: string }).capability === 'email');
      expect(email?.message, String(baseUrl)).toBe('Email delivery is off: emails are printed to this console instead; set SMTP_URL to send them');
    }
    const lines = startBanner(loadConfig({ BASE_URL: 'https://auth.example.com' }), 'http://127.0.0.1:3000', 1);
    const email = lines.find((line) => (line.details as { capability?: string }).capability === 'email');
    expect(email).toEqual({
      level: 'warn',
      message:
        'Email delivery is off: emails stay queued and are not printed to this console, because BASE_URL (https://auth.example.com) is not localhost, 127.0.0.1 or [::1]; set SMTP_URL to send them',
      details: { capability: 'email', state: 'queued', baseUrl: 'https://auth.example.com', variables: ['SMTP_URL'] },
    });
    expect(lines.some((line) => /printed to this console instead/.test(line.message))).toBe(false);
  });

  test('production with METRICS_PUBLIC=true: the open /metrics is a warning; with METRICS_TOKEN, no line', () => {
    const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), BASE_URL: 'https://auth.example.com' };
    const open = startBanner(loadConfig({ ...production, METRICS_PUBLIC: 'true' }), 'http://127.0.0.1:1', 1).filter((line) =>
      line.message.includes('/metrics'),
    );
    expect(open).toEqual([
      expect.objectContaining({ level: 'warn', message: expect.stringMatching(/^GET \/metrics is open to anyone .*METRICS_PUBLIC=true/) }),
    ]);
    const closed = startBanner(loadConfig({ ...production, METRICS_TOKEN: 'm'.repeat(16) }), 'http://127.0.0.1:1', 1);
    expect(closed.some((line) => line.message.includes('/metrics'))).toBe(false);
  });

  test('databases: PostgreSQL by host, port and name only; SQLite in memory', () => {
    const postgres = startBanner(
      loadConfig({ DATABASE_URL: 'postgres://admin:pg-hunter2@db.internal:5433/auth?sslmode=require&sslpassword=key-hunter2' }),
      'http://127.0.0.1:1',
      1,
    );
    expect(postgres[2]?.message).toMatch(/^Database: PostgreSQL at db\.internal:5433\/auth\. Data folder: \//);
    expect(postgres[2]?.details).toMatchObject({ database: 'postgres', server: 'db.internal:5433/auth' });
    const memory = startBanner(loadConfig({ DATABASE_URL: 'sqlite::memory:' }), 'http://127.0.0.1:1', 1);
    expect(memory[2]?.message).toMatch(/^Database: SQLite in memory, gone when the server stops\./);
  });

  test('no secret reaches a line, in the messages or in the fields', () => {
    const lines = startBanner(
      loadConfig({
        NODE_ENV: 'production',
        BASE_URL: 'https://auth.example.com',
        JWT_SECRET: `jwt-hunter2-${'x'.repeat(32)}`,
        METRICS_TOKEN: 'metrics-hunter2-0123456789',
        DATABASE_URL: 'postgresql://admin:pg-hunter2@db.internal/auth?password=query-hunter2',
        REDIS_URL: 'redis://:redis-hunter2@cache.internal:6379',
        SMTP_URL: 'smtp://mailer:smtp-hunter2@mail.example.com:587',
        GITHUB_CLIENT_ID: 'id',
        GITHUB_CLIENT_SECRET: 'github-hunter2',
        AUTH_SECRET: 'auth-hunter2-0123456789',
        ENCRYPTION_KEY_BASE64: KEY,
      }),
      'http://127.0.0.1:1',
      1,
    );
    const text = everything(lines);
    expect(text).not.toMatch(/hunter2|admin|mailer/);
    expect(text).not.toContain(KEY);
  });
});

describe('describeServerAddress()', () => {
  test('keeps host, port and database name; drops user, password and query', () => {
    expect(describeServerAddress('postgres://u:p@db:5432/auth?sslmode=require')).toBe('db:5432/auth');
    expect(describeServerAddress('postgres://db.internal')).toBe('db.internal');
    expect(describeServerAddress('smtp://u:p@mail.example.com:587/')).toBe('mail.example.com:587');
    // A socket directory given as a query parameter leaves no host to show.
    expect(describeServerAddress('postgres://u:p@/auth?host=/var/run/postgresql')).toBeNull();
    expect(describeServerAddress('not a url')).toBeNull();
  });

  test('webhooks: the endpoint count read at start and who delivers; none without the facts; off without a key', () => {
    // The configuration's banner has no webhook line: the capability adds it from the database.
    expect(
      startBanner(loadConfig({ ENCRYPTION_KEY_BASE64: KEY }), 'http://127.0.0.1:1', 1).find((line) => line.message.startsWith('Webhooks')),
    ).toBeUndefined();
    const webhookLineOf = (env: Record<string, string>, facts: { webhookEndpoints: number; webhookEndpointsEnabled: number }) =>
      webhookLine(loadConfig(env), { total: facts.webhookEndpoints, enabled: facts.webhookEndpointsEnabled });
    expect(webhookLineOf({ ENCRYPTION_KEY_BASE64: KEY }, { webhookEndpoints: 0, webhookEndpointsEnabled: 0 })?.message).toContain('no endpoint registered');
    const two = webhookLineOf({ ENCRYPTION_KEY_BASE64: KEY }, { webhookEndpoints: 2, webhookEndpointsEnabled: 1 });
    expect(two?.message).toBe('Webhooks: 2 endpoints (1 enabled), delivered by this server');
    expect(two?.details).toMatchObject({ endpoints: 2, enabled: 1, delivery: 'server' });
    const worker = webhookLineOf({ ENCRYPTION_KEY_BASE64: KEY, WEBHOOK_DELIVERY: 'worker' }, { webhookEndpoints: 1, webhookEndpointsEnabled: 1 });
    expect(worker?.message).toContain('only by `gatehouse webhooks worker`');
    const keyless = webhookLineOf({}, { webhookEndpoints: 1, webhookEndpointsEnabled: 1 });
    expect([keyless?.level, keyless?.message]).toEqual(['warn', 'Webhooks are off: set ENCRYPTION_KEY_BASE64 to register endpoints and sign deliveries']);
  });
});
