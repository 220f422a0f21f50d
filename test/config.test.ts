import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig, parseDurationSeconds, parseRateLimitRule } from '../src/config.js';

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
    const config = loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), BASE_URL: 'https://auth.example.com' });
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
    const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) };
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
    const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), BASE_URL: 'https://auth.example.com' };
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
