import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { parseDurationSeconds, parseRateLimitRule } from '../src/settings.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('loadConfig()', () => {
  test('defaults: SQLite file, port 3000, 24 h sessions, bcrypt 10, spec rate limits', () => {
    const config = loadConfig({});
    expect(config.database).toEqual({ kind: 'sqlite', filename: './data/gatehouse.db' });
    expect(config.port).toBe(3000);
    expect(config.host).toBe('127.0.0.1');
    expect(config.baseUrl).toBe('http://localhost:3000');
    expect(config.sessionExpiresInSeconds).toBe(86400);
    expect(config.sessionCookieName).toBe('gatehouse_session');
    expect(config.bcryptRounds).toBe(10);
    expect(config.rateLimits.register).toEqual({ points: 5, durationSeconds: 900 });
    expect(config.rateLimits.login).toEqual({ points: 10, durationSeconds: 900 });
    expect(config.lockout).toEqual({ maxFailures: 5, durationSeconds: 900 });
    expect(config.jwtSecret).toBeNull();
    expect(config.mode).toBe('default');
  });

  test('the result is frozen', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.rateLimits)).toBe(true);
  });

  test('production refuses to start without JWT_SECRET and names the variable', () => {
    const problems = problemsOf({ NODE_ENV: 'production' });
    expect(problems.some((p) => p.startsWith('JWT_SECRET:'))).toBe(true);
    const config = loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), BASE_URL: 'https://auth.example.com', METRICS_PUBLIC: 'true' });
    expect(config.sessionCookieName).toBe('__Host-gatehouse_session');
  });

  test('secure by the URL: an https BASE_URL makes cookies Secure and __Host- prefixed in every mode', () => {
    const config = loadConfig({ BASE_URL: 'https://auth.example.com' });
    expect(config.mode).toBe('default');
    expect(config.httpsBaseUrl).toBe(true);
    expect(config.sessionCookieName).toBe('__Host-gatehouse_session');
    expect(loadConfig({}).httpsBaseUrl).toBe(false);
    expect(loadConfig({}).sessionCookieName).toBe('gatehouse_session');
  });

  test('production refuses a plain-http BASE_URL unless ALLOW_INSECURE_BASE_URL=true, naming the variable', () => {
    const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), METRICS_PUBLIC: 'true' };
    for (const baseUrl of [undefined, 'http://auth.example.com']) {
      const problems = problemsOf({ ...production, ...(baseUrl ? { BASE_URL: baseUrl } : {}) });
      expect(problems, String(baseUrl)).toHaveLength(1);
      expect(problems[0]).toMatch(/^BASE_URL: production needs the https:\/\/ address/);
      expect(problems[0]).toContain('ALLOW_INSECURE_BASE_URL=true');
    }
    const insecure = loadConfig({ ...production, BASE_URL: 'http://auth.example.com', ALLOW_INSECURE_BASE_URL: 'true' });
    expect(insecure.httpsBaseUrl).toBe(false);
    expect(insecure.sessionCookieName).toBe('gatehouse_session');
    expect(problemsOf({ ALLOW_INSECURE_BASE_URL: 'yes' })[0]).toMatch(/^ALLOW_INSECURE_BASE_URL: expected true or false/);
  });

  test('production refuses an overridden SESSION_COOKIE_NAME without the __Host- prefix', () => {
    const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), BASE_URL: 'https://auth.example.com', METRICS_PUBLIC: 'true' };
    expect(problemsOf({ ...production, SESSION_COOKIE_NAME: 'my_session' })).toEqual([
      expect.stringMatching(/^SESSION_COOKIE_NAME: in production the name must start with __Host-/),
    ]);
    expect(problemsOf({ ...production, SESSION_COOKIE_NAME: '__Secure-my_session' })).toHaveLength(1);
    expect(loadConfig({ ...production, SESSION_COOKIE_NAME: '__Host-mine' }).sessionCookieName).toBe('__Host-mine');
  });

  test('every bad value is named with the form it expects', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      BASE_URL: 'ftp://x',
      DATABASE_URL: 'mysql://x',
      JWT_SECRET: 'short',
      SESSION_EXPIRES_IN: '-1',
      BCRYPT_ROUNDS: '40',
      RATE_LIMIT_LOGIN: 'ten per minute',
      LOCKOUT_DURATION: 'forever',
      TRUST_PROXY: 'yes',
      REDIS_URL: 'localhost:6379',
      LOGIN_PAGE_URL: 'https://evil.example/login',
    });
    for (const variable of [
      'PORT',
      'BASE_URL',
      'DATABASE_URL',
      'JWT_SECRET',
      'SESSION_EXPIRES_IN',
      'BCRYPT_ROUNDS',
      'RATE_LIMIT_LOGIN',
      'LOCKOUT_DURATION',
      'TRUST_PROXY',
      'REDIS_URL',
      'LOGIN_PAGE_URL',
    ]) {
      expect(
        problems.some((p) => p.startsWith(`${variable}:`)),
        variable,
      ).toBe(true);
    }
    expect(problems.find((p) => p.startsWith('JWT_SECRET:'))).not.toContain('short');
  });

  test('rate limits, lockout, TRUST_PROXY and Redis variables', () => {
    const config = loadConfig({
      RATE_LIMIT_LOGIN: '2/1m',
      RATE_LIMIT_PASSWORD_RESET_REQUEST: '3/1h',
      LOCKOUT_MAX_FAILURES: '3',
      LOCKOUT_DURATION: '2m',
      TRUST_PROXY: '1',
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: 'auth:eu-1',
    });
    expect(config.rateLimits.login).toEqual({ points: 2, durationSeconds: 60 });
    expect(config.rateLimits.passwordResetRequest).toEqual({ points: 3, durationSeconds: 3600 });
    expect(config.rateLimits.register).toEqual({ points: 5, durationSeconds: 900 });
    expect(config.lockout).toEqual({ maxFailures: 3, durationSeconds: 120 });
    expect(config.trustProxyHops).toBe(1);
    expect(config.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(config.redisKeyPrefix).toBe('auth:eu-1');
    expect(loadConfig({}).redisKeyPrefix).toBe('gatehouse');
    expect(loadConfig({}).redisUrl).toBeNull();
  });

  test('windows and locks longer than 7 days, and odd Redis key prefixes, are refused by name', () => {
    const problems = problemsOf({ RATE_LIMIT_REGISTER: '5/200h', LOCKOUT_DURATION: '169h', REDIS_KEY_PREFIX: 'has space', LOCKOUT_MAX_FAILURES: '0' });
    for (const variable of ['RATE_LIMIT_REGISTER', 'LOCKOUT_DURATION', 'REDIS_KEY_PREFIX', 'LOCKOUT_MAX_FAILURES']) {
      expect(
        problems.some((p) => p.startsWith(`${variable}:`)),
        variable,
      ).toBe(true);
    }
    expect(loadConfig({ RATE_LIMIT_REGISTER: '5/168h', LOCKOUT_DURATION: '168h' }).lockout.durationSeconds).toBe(604800);
  });

  test('a __Host- or __Secure- session cookie name is refused without an https BASE_URL', () => {
    expect(problemsOf({ SESSION_COOKIE_NAME: '__Host-mine' }).some((p) => p.startsWith('SESSION_COOKIE_NAME:'))).toBe(true);
    expect(problemsOf({ SESSION_COOKIE_NAME: '__Secure-mine' }).some((p) => p.startsWith('SESSION_COOKIE_NAME:'))).toBe(true);
    expect(loadConfig({ BASE_URL: 'https://auth.example.com', SESSION_COOKIE_NAME: '__Host-mine' }).sessionCookieName).toBe('__Host-mine');
  });

  test('DATABASE_URL forms', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).database).toEqual({ kind: 'sqlite', filename: ':memory:' });
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h:5432/db' }).database).toEqual({ kind: 'postgres', connectionString: 'postgres://u@h:5432/db' });
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@h/db' }).database.kind).toBe('postgres');
  });

  test('development conveniences only with a loopback BASE_URL: NODE_ENV=development with any other refuses to start, naming both', () => {
    for (const baseUrl of [undefined, 'http://localhost:8080', 'http://127.0.0.1:3000', 'http://[::1]:3000', 'https://LOCALHOST']) {
      const env = baseUrl === undefined ? {} : { BASE_URL: baseUrl };
      expect(loadConfig({ ...env, NODE_ENV: 'development' }).devConveniences, String(baseUrl)).toBe(true);
      expect(loadConfig(env).devConveniences, String(baseUrl)).toBe(true);
    }
    // An unset BASE_URL with PORT=0 is http://localhost:0 until the port is bound: still loopback.
    expect(loadConfig({ NODE_ENV: 'development', PORT: '0' }).devConveniences).toBe(true);
    for (const baseUrl of [
      'https://auth.example.com',
      'http://192.168.1.20:3000',
      'http://127.0.0.2:3000',
      'http://localhost.example.com',
      'http://[::2]:3000',
    ]) {
      const problems = problemsOf({ NODE_ENV: 'development', BASE_URL: baseUrl });
      expect(problems, baseUrl).toHaveLength(1);
      expect(problems[0]).toMatch(/^NODE_ENV: development .* needs a BASE_URL on localhost, 127\.0\.0\.1 or \[::1\], got BASE_URL "/);
      expect(problems[0]).toContain(new URL(baseUrl).origin);
      // The default mode starts, without the conveniences.
      expect(loadConfig({ BASE_URL: baseUrl }).devConveniences, baseUrl).toBe(false);
    }
    // Production never has them, loopback or not.
    const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), ALLOW_INSECURE_BASE_URL: 'true', METRICS_PUBLIC: 'true' };
    expect(loadConfig({ ...production, BASE_URL: 'http://localhost:3000' }).devConveniences).toBe(false);
  });

  test('production needs METRICS_TOKEN unless METRICS_PUBLIC=true, naming both', () => {
    const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), BASE_URL: 'https://auth.example.com' };
    const problems = problemsOf(production);
    expect(problems).toEqual([expect.stringMatching(/^METRICS_TOKEN: required in production.*METRICS_PUBLIC=true/)]);
    expect(loadConfig({ ...production, METRICS_TOKEN: 'm'.repeat(16) }).metricsToken).toBe('m'.repeat(16));
    const open = loadConfig({ ...production, METRICS_PUBLIC: 'true' });
    expect(open.metricsToken).toBeNull();
    expect(open.metricsPublic).toBe(true);
    expect(problemsOf({ ...production, METRICS_PUBLIC: 'false' })).toHaveLength(1);
    expect(problemsOf({ METRICS_PUBLIC: 'yes' })).toEqual([expect.stringMatching(/^METRICS_PUBLIC: expected true or false/)]);
    // Outside production an open /metrics needs nothing.
    expect(loadConfig({}).metricsPublic).toBe(false);
    expect(loadConfig({}).metricsToken).toBeNull();
  });

  test('BCRYPT_ROUNDS below 10 is refused in production; 4 to 15 otherwise', () => {
    const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), BASE_URL: 'https://auth.example.com', METRICS_PUBLIC: 'true' };
    for (const rounds of ['4', '9']) {
      expect(problemsOf({ ...production, BCRYPT_ROUNDS: rounds }), rounds).toEqual([
        `BCRYPT_ROUNDS: production needs a cost of at least 10 (4 to 9 are for tests and development), got "${rounds}"`,
      ]);
      expect(loadConfig({ BCRYPT_ROUNDS: rounds }).bcryptRounds).toBe(Number(rounds));
      expect(loadConfig({ NODE_ENV: 'development', BCRYPT_ROUNDS: rounds }).bcryptRounds).toBe(Number(rounds));
    }
    expect(loadConfig({ ...production, BCRYPT_ROUNDS: '10' }).bcryptRounds).toBe(10);
    expect(loadConfig(production).bcryptRounds).toBe(10);
    // Out of range is still named by its range, once.
    expect(problemsOf({ ...production, BCRYPT_ROUNDS: '3' })).toEqual([expect.stringMatching(/^BCRYPT_ROUNDS: expected a whole number from 4 to 15/)]);
  });

  test('SESSION_IDLE_TIMEOUT: off unless set; a duration from 1m to 365 days', () => {
    for (const off of [undefined, '', ' ', '0', '0s', '0m']) {
      expect(loadConfig(off === undefined ? {} : { SESSION_IDLE_TIMEOUT: off }).sessionIdleTimeoutSeconds, String(off)).toBeNull();
    }
    expect(loadConfig({ SESSION_IDLE_TIMEOUT: '30m' }).sessionIdleTimeoutSeconds).toBe(1800);
    expect(loadConfig({ SESSION_IDLE_TIMEOUT: '8h' }).sessionIdleTimeoutSeconds).toBe(28_800);
    expect(loadConfig({ SESSION_IDLE_TIMEOUT: '60' }).sessionIdleTimeoutSeconds).toBe(60);
    expect(loadConfig({ SESSION_IDLE_TIMEOUT: '8760h' }).sessionIdleTimeoutSeconds).toBe(31_536_000);
    for (const bad of ['30s', '59', '8761h', '30 minutes', '-5m', '1d']) {
      expect(problemsOf({ SESSION_IDLE_TIMEOUT: bad }), bad).toEqual([expect.stringMatching(/^SESSION_IDLE_TIMEOUT: expected a duration from 1m to 8760h/)]);
    }
  });

  test('provider variables never stop the start; their problems are listed for the flow', () => {
    const config = loadConfig({ ENCRYPTION_KEY_BASE64: 'c2hvcnQ=' });
    expect(config.github).toBeNull();
    expect(config.oauthProblems.join('\n')).toMatch(/GITHUB_CLIENT_ID/);
    expect(config.oauthProblems.join('\n')).toMatch(/ENCRYPTION_KEY_BASE64/);
    expect(config.oauthProblems.join('\n')).toMatch(/AUTH_SECRET/);
  });
});

describe('parseRateLimitRule()', () => {
  test('accepts <count>/<window> with s, m, h or bare seconds', () => {
    expect(parseRateLimitRule('10/15m')).toEqual({ points: 10, durationSeconds: 900 });
    expect(parseRateLimitRule('3/60')).toEqual({ points: 3, durationSeconds: 60 });
    expect(parseRateLimitRule('100/1h')).toEqual({ points: 100, durationSeconds: 3600 });
    expect(parseRateLimitRule('5/30s')).toEqual({ points: 5, durationSeconds: 30 });
  });
  test('refuses anything else', () => {
    for (const bad of ['10', '0/15m', '10/0', '10/15d', '-1/15m', 'a/b', '10/15m/1', '1.5/10']) {
      expect(parseRateLimitRule(bad), bad).toBeNull();
    }
  });
  test('parseDurationSeconds()', () => {
    expect(parseDurationSeconds('15m')).toBe(900);
    expect(parseDurationSeconds('0')).toBeNull();
  });
});
