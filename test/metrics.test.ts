import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { totp } from './support/totp-oracle.js';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const COOKIE = 'gatehouse_session';
const TOKEN = 'metrics-token-0123456789abcdef';

/** Prometheus text → `name{label="value",…}` (labels sorted) → value. */
function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`unparsable metrics line: ${line}`);
    const labels = [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(([, name, value]) => `${name}="${value}"`).sort();
    samples.set(`${match[1]}{${labels.join(',')}}`, Number(match[3]));
  }
  return samples;
}

/** The sample's key as parseMetrics writes it. */
function key(name: string, labels: Record<string, string> = {}): string {
  const pairs = Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .sort();
  return `${name}{${pairs.join(',')}}`;
}

describeEachDialect('GET /metrics (DESIGN §9.6)', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, {
      env: { RATE_LIMIT_LOGIN: '3/15m', RATE_LIMIT_REGISTER: '100/15m', LOCKOUT_MAX_FAILURES: '3' },
    });
  });
  afterEach(async () => {
    await t.close();
  });

  async function scrape(headers: Record<string, string> = {}): Promise<Map<string, number>> {
    const response = await t.request('GET', '/metrics', { headers });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(await response.text());
  }
  const login = (email: string, password: string, ip: string): Promise<Response> => t.request('POST', '/api/auth/login', { json: { email, password }, ip });

  test('known traffic moves each metric by exactly its amount, labelled by route pattern', async () => {
    const registered = await t.request('POST', '/api/auth/register', { json: { email: 'ana@example.com', password: STRONG_PASSWORD }, ip: '198.51.100.1' });
    expect(registered.status).toBe(201);
    const before = await scrape();

    // 2 successful logins; 3 wrong passwords (the third starts a lock on the email and the IP);
    // a locked attempt from another IP; then the first IP's 4th login of the window: rate limited.
    expect((await login('ana@example.com', STRONG_PASSWORD, '203.0.113.1')).status).toBe(200);
    const signedIn = await login('ana@example.com', STRONG_PASSWORD, '203.0.113.1');
    expect(signedIn.status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await login('bob@example.com', 'Wrong-Password-1', '203.0.113.2')).status).toBe(401);
    const locked = await login('bob@example.com', 'Wrong-Password-1', '203.0.113.3');
    expect(locked.status).toBe(429);
    expect(((await locked.json()) as { error: string }).error).toBe('account_locked');
    const limited = await login('carol@example.com', 'Wrong-Password-1', '203.0.113.2');
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as { error: string }).error).toBe('rate_limited');

    const cookie = cookieFrom(signedIn, COOKIE)!;
    expect((await t.request('GET', '/api/auth/session', { cookie })).status).toBe(200);
    expect((await t.request('GET', `/no/such/page/${randomUUID()}`)).status).toBe(404);
    expect((await t.request('DELETE', `/api/auth/sessions/${randomUUID()}`, { cookie })).status).toBe(404);

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}): number => (after.get(key(name, labels)) ?? 0) - (before.get(key(name, labels)) ?? 0);

    expect(delta('gatehouse_logins_total', { result: 'success', method: 'password' })).toBe(2);
    expect(delta('gatehouse_logins_total', { result: 'failure', method: 'password' })).toBe(3);
    expect(delta('gatehouse_logins_total', { result: 'locked', method: 'password' })).toBe(1);
    expect(delta('gatehouse_logins_total', { result: 'rate_limited', method: 'password' })).toBe(1);
    expect(delta('gatehouse_login_locks_started_total')).toBe(1);
    expect(delta('gatehouse_rate_limit_refusals_total', { limit: 'login' })).toBe(1);

    const requests = (route: string, method: string, status: string): number => delta('gatehouse_http_requests_total', { route, method, status });
    expect(requests('/api/auth/login', 'POST', '200')).toBe(2);
    expect(requests('/api/auth/login', 'POST', '401')).toBe(3);
    expect(requests('/api/auth/login', 'POST', '429')).toBe(2);
    expect(requests('/api/auth/session', 'GET', '200')).toBe(1);
    expect(requests('unmatched', 'GET', '404')).toBe(1);
    // The pattern, never the raw path: a client cannot grow the label set.
    expect(requests('/api/auth/sessions/:id', 'DELETE', '404')).toBe(1);
    expect([...after.keys()].some((sample) => sample.includes('/no/such/page') || /sessions\/[0-9a-f]{8}-/.test(sample))).toBe(false);
    // The scrape before this one was counted once it had answered.
    expect(requests('/metrics', 'GET', '200')).toBe(1);

    // The latency histogram: one count per answer, cumulative buckets up to +Inf.
    const histogram = { route: '/api/auth/session', method: 'GET', status: '200' };
    expect(delta('gatehouse_http_request_duration_seconds_count', histogram)).toBe(1);
    expect(delta('gatehouse_http_request_duration_seconds_bucket', { ...histogram, le: '+Inf' })).toBe(1);
    expect(after.get(key('gatehouse_http_request_duration_seconds_sum', histogram))).toBeGreaterThan(0);
    const buckets = [...after.entries()].filter(
      ([sample]) =>
        sample.startsWith('gatehouse_http_request_duration_seconds_bucket{') && sample.includes('route="/api/auth/login"') && sample.includes('status="401"'),
    );
    expect(buckets.length).toBe(13);
    const counts = buckets.map(([, value]) => value);
    expect(Math.max(...counts)).toBe(3);
  });

  test('default process metrics, the hash pool and the outbox by status', async () => {
    const before = await scrape();
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect([...before.keys()].some((sample) => sample.startsWith(`${name}{`))).toBe(true);
    }
    expect(before.get(key('gatehouse_hash_pool_queue_depth'))).toBe(0);
    // The threads may still be busy with the dummy hash made at start.
    expect(before.get(key('gatehouse_hash_pool_busy_threads'))).toBeGreaterThanOrEqual(0);
    expect(before.get(key('gatehouse_outbox_query_up'))).toBe(1);
    for (const status of ['queued', 'sending', 'sent', 'dead', 'expired']) expect(before.get(key('gatehouse_outbox_emails', { status }))).toBe(0);

    // Queued without waking the sender: it stays queued until something delivers it.
    for (const recipient of ['one@example.com', 'two@example.com']) {
      await t.gatehouse.stores.outbox.enqueueEmail({
        id: randomUUID(),
        recipient,
        template: 'email_verification',
        subject: 'Hello',
        text: 'text',
        html: '<p>html</p>',
        createdAt: t.clock.now(),
        expiresAt: null,
      });
    }
    const queued = await scrape();
    expect(queued.get(key('gatehouse_outbox_emails', { status: 'queued' }))).toBe(2);

    await t.gatehouse.deliverQueuedEmails();
    const delivered = await scrape();
    expect(delivered.get(key('gatehouse_outbox_emails', { status: 'queued' }))).toBe(0);
    expect(delivered.get(key('gatehouse_outbox_emails', { status: 'sent' }))).toBe(2);
  });
});

describeEachDialect('GET /metrics: two-factor sign-ins', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: { ENCRYPTION_KEY_BASE64: Buffer.alloc(32, 7).toString('base64') } });
  });
  afterEach(async () => {
    await t.close();
  });

  test('a right password of a 2FA account is mfa_required; a wrong code a totp failure; the right one a password+totp success', async () => {
    const email = 'ana@example.com';
    const cookie = cookieFrom(await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } }), COOKIE)!;
    await t.gatehouse.stores.users.markEmailVerified((await t.gatehouse.stores.users.findUserByEmail(email))!.id);
    const { secret } = (await (await t.request('POST', '/api/auth/2fa/totp/setup', { cookie, json: { currentPassword: STRONG_PASSWORD } })).json()) as {
      secret: string;
    };
    expect((await t.request('POST', '/api/auth/2fa/totp/enable', { cookie, json: { code: totp(secret, t.clock.now().getTime()) } })).status).toBe(200);
    const before = parseMetrics(await (await t.request('GET', '/metrics')).text());
    // The next time step: the code used to enable cannot be used again.
    t.clock.advance(30_000);

    const first = await t.request('POST', '/api/auth/login', { json: { email, password: STRONG_PASSWORD } });
    expect(await first.json()).toMatchObject({ mfaRequired: true });
    const challenge = cookieFrom(first, 'gatehouse_mfa')!;
    expect((await t.request('POST', '/api/auth/2fa/verify', { cookie: challenge, json: { code: totp(secret, t.clock.now().getTime(), 3) } })).status).toBe(401);
    expect((await t.request('POST', '/api/auth/2fa/verify', { cookie: challenge, json: { code: totp(secret, t.clock.now().getTime()) } })).status).toBe(200);

    const after = parseMetrics(await (await t.request('GET', '/metrics')).text());
    const delta = (labels: Record<string, string>): number =>
      (after.get(key('gatehouse_logins_total', labels)) ?? 0) - (before.get(key('gatehouse_logins_total', labels)) ?? 0);
    expect(delta({ result: 'mfa_required', method: 'password' })).toBe(1);
    expect(delta({ result: 'failure', method: 'totp' })).toBe(1);
    expect(delta({ result: 'success', method: 'password+totp' })).toBe(1);
    expect(delta({ result: 'success', method: 'password' })).toBe(0);
  });
});

describeEachDialect('GET /metrics with METRICS_TOKEN', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: { METRICS_TOKEN: TOKEN } });
  });
  afterEach(async () => {
    await t.close();
  });

  test('needs the bearer token: 401 without it or with a wrong one', async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: `Bearer ${TOKEN}x` }, { authorization: `Basic ${TOKEN}` }, { authorization: 'Bearer ' }];
    for (const headers of attempts) {
      const refused = await t.request('GET', '/metrics', { headers });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(await refused.json()).toEqual({ error: 'not_authenticated', message: expect.any(String) });
    }
    const allowed = await t.request('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(allowed.status).toBe(200);
    const text = await allowed.text();
    expect(text).toContain('gatehouse_http_requests_total{route="/metrics",method="GET",status="401"} 4');
    expect(text).not.toContain(TOKEN);
  });

  test('RATE_LIMIT_METRICS per IP, counted before the token: past it 429 with Retry-After whatever the token; another IP and the next window are served', async () => {
    const limited = await createTestGatehouse(dialect, { env: { METRICS_TOKEN: TOKEN, RATE_LIMIT_METRICS: '3/1m' } });
    try {
      const scrape = (authorization: string, ip = '203.0.113.9') => limited.request('GET', '/metrics', { headers: { authorization }, ip });
      expect((await scrape(`Bearer ${TOKEN}`)).status).toBe(200);
      // Wrong tokens count too: guessing is bounded like scraping.
      expect((await scrape('Bearer wrong-token-0123456789')).status).toBe(401);
      expect((await scrape(`Bearer ${TOKEN}`)).status).toBe(200);
      for (const authorization of [`Bearer ${TOKEN}`, 'Bearer wrong-token-0123456789']) {
        const refused = await scrape(authorization);
        expect(refused.status).toBe(429);
        expect(await refused.json()).toEqual({ error: 'rate_limited', message: expect.any(String) });
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      expect((await scrape(`Bearer ${TOKEN}`, '203.0.113.10')).status).toBe(200);
      limited.clock.advance(61_000);
      const served = await scrape(`Bearer ${TOKEN}`);
      expect(served.status).toBe(200);
      expect(parseMetrics(await served.text()).get(key('gatehouse_rate_limit_refusals_total', { limit: 'metrics' }))).toBe(2);
    } finally {
      await limited.close();
    }
  });
});
