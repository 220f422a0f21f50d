/**
 * TRUST_PROXY against what arrives: with 0, an X-Forwarded-For is ignored (anyone can send one)
 * and said once in the log with the fix; with 1, the proxy's entry is the client. Behind a real
 * nginx: test/nginx.test.ts.
 */
import { afterEach, expect, test } from 'vitest';
import { createLogger } from '../src/logger.js';
import { createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

describeEachDialect('TRUST_PROXY and X-Forwarded-For', (dialect) => {
  let t: TestGatehouse | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const start = async (trustProxy: string) => {
    const lines: string[] = [];
    t = await createTestGatehouse(dialect, {
      env: { TRUST_PROXY: trustProxy },
      overrides: { logger: createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(line) } }) },
    });
    return { t, lines };
  };
  const warnings = (lines: string[]) => lines.map((line) => JSON.parse(line) as { msg: string }).filter((line) => /X-Forwarded-For/.test(line.msg));

  test('TRUST_PROXY=0: no warning without the header; one warning, once, naming the setting, when it arrives', async () => {
    const { t, lines } = await start('0');
    await t.request('GET', '/healthz');
    expect(warnings(lines)).toEqual([]);
    await t.request('GET', '/healthz', { headers: { 'x-forwarded-for': '198.51.100.1' } });
    await t.request('GET', '/healthz', { headers: { 'x-forwarded-for': '198.51.100.2' } });
    const said = warnings(lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toMatch(/TRUST_PROXY=0.*set TRUST_PROXY to the number of proxies/);
  });

  test("TRUST_PROXY=0: the header changes nobody's address (the lock counts the socket's)", async () => {
    const { t } = await start('0');
    for (let i = 0; i < 5; i++)
      await t.request('POST', '/api/auth/login', {
        json: { email: `x${i}@example.com`, password: 'Wrong-Password-1' },
        headers: { 'x-forwarded-for': `198.51.100.${i}` },
      });
    const response = await t.request('POST', '/api/auth/login', {
      json: { email: 'y@example.com', password: 'Wrong-Password-1' },
      headers: { 'x-forwarded-for': '198.51.100.99' },
    });
    expect(response.status).toBe(429);
  });

  test('TRUST_PROXY=1: no warning, and the last entry is the client', async () => {
    const { t, lines } = await start('1');
    for (let i = 0; i < 5; i++)
      await t.request('POST', '/api/auth/login', {
        json: { email: `x${i}@example.com`, password: 'Wrong-Password-1' },
        headers: { 'x-forwarded-for': `10.0.0.1, 198.51.100.7` },
      });
    const locked = await t.request('POST', '/api/auth/login', {
      json: { email: 'y@example.com', password: 'Wrong-Password-1' },
      headers: { 'x-forwarded-for': '198.51.100.7' },
    });
    expect(locked.status).toBe(429);
    const other = await t.request('POST', '/api/auth/login', {
      json: { email: 'y@example.com', password: 'Wrong-Password-1' },
      headers: { 'x-forwarded-for': '198.51.100.8' },
    });
    expect(other.status).toBe(401);
    expect(warnings(lines)).toEqual([]);
  });
});
