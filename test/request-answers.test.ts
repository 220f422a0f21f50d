/**
 * Answers that help a developer find their mistake: 405 with `Allow` for a known path asked with
 * the wrong method, "is required" for a missing field, and at LOG_LEVEL=debug one log line per
 * refused (4xx) request, without its query string.
 */
import { Writable } from 'node:stream';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createLogger } from '../src/logger.js';
import { createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

describeEachDialect('request answers', (dialect) => {
  let t: TestGatehouse;
  const logs: Record<string, unknown>[] = [];
  beforeEach(async () => {
    logs.length = 0;
    const destination = new Writable({
      write(chunk, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    t = await createTestGatehouse(dialect, { overrides: { logger: createLogger({ level: 'debug', destination }) } });
  });
  afterEach(async () => {
    await t.close();
  });

  test('a known path with the wrong method: 405 method_not_allowed with Allow; an unknown path stays 404', async () => {
    const login = await t.request('GET', '/api/auth/login');
    expect(login.status).toBe(405);
    expect(login.headers.get('allow')).toBe('POST');
    expect(await login.json()).toEqual({ error: 'method_not_allowed', message: '/api/auth/login does not take GET; it takes POST.' });

    // A path with a parameter, and GET bringing HEAD along.
    const session = await t.request('DELETE', '/api/auth/session');
    expect(session.status).toBe(405);
    expect(session.headers.get('allow')?.split(', ')).toEqual(expect.arrayContaining(['GET', 'HEAD']));
    const passkey = await t.request('GET', '/api/auth/passkeys/some-id');
    expect(passkey.status).toBe(405);
    expect(passkey.headers.get('allow')).toMatch(/DELETE/);

    const unknown = await t.request('GET', '/api/auth/no-such-thing');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('allow')).toBeNull();
    expect(await unknown.json()).toMatchObject({ error: 'not_found' });
  });

  test('a missing field says "is required", a wrong one keeps its own words', async () => {
    const missing = await t.request('POST', '/api/auth/register', { json: {} });
    expect(missing.status).toBe(400);
    const body = (await missing.json()) as { error: string; issues: { path: string; message: string }[] };
    expect(body.error).toBe('validation_error');
    expect(body.issues).toEqual(
      expect.arrayContaining([
        { path: 'email', message: 'is required' },
        { path: 'password', message: 'is required' },
      ]),
    );
    const wrongType = await t.request('POST', '/api/auth/login', { json: { email: 42, password: 'x' } });
    const wrong = (await wrongType.json()) as { issues: { path: string; message: string }[] };
    expect(wrong.issues.find((issue) => issue.path === 'email')?.message).not.toBe('is required');
  });

  test('LOG_LEVEL=debug: one line per 4xx, with status, method and path but never the query string; none for a 2xx', async () => {
    await t.request('GET', '/healthz');
    await t.request('GET', '/api/auth/session?token=secret-in-query');
    await t.request('GET', '/api/auth/login');
    const refused = logs.filter((line) => line.msg === 'request refused');
    expect(refused.map((line) => [line.status, line.method, line.path])).toEqual([
      [401, 'GET', '/api/auth/session'],
      [405, 'GET', '/api/auth/login'],
    ]);
    expect(refused.every((line) => typeof line.requestId === 'string' && line.level === 20)).toBe(true);
    expect(JSON.stringify(logs)).not.toContain('secret-in-query');
  });
});
