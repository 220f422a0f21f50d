// npm run soak (issue 8): two server instances over one PostgreSQL database and one Redis, mixed
// traffic for SOAK_SECONDS, then: every 201 registration is in the database and a sample can sign
// in, no 5xx, no unexpected status, memory flat, both servers stop cleanly on SIGTERM.
// Exits 1 when any check fails. All traffic goes to 127.0.0.1 only.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import Redis from 'ioredis';
import pg from 'pg';
import { answers, CLI, procStatusMB, sleep, startServer } from './lib.mjs';

const SECONDS = positiveInt('SOAK_SECONDS', 180);
// Bounded concurrency: enough to keep both servers' hash pools busy, low enough that a 2-core
// machine shared with other work is not drowned (and the generator itself stays cheap).
const CONCURRENCY = positiveInt('SOAK_CONCURRENCY', 16);
const BCRYPT_ROUNDS = positiveInt('SOAK_BCRYPT_ROUNDS', 10);
const PG_ADMIN_URL = process.env.SOAK_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.SOAK_REDIS_URL ?? 'redis://127.0.0.1:6379';
const RSS_SAMPLE_MS = 5000;
// RSS while the first requests warm the JIT and grow the heap is not a leak; the "first minute"
// starts after this.
const WARMUP_SECONDS = 10;
const REQUEST_TIMEOUT_MS = 30_000;
const PASSWORD = 'Soak-Password-1';
const SAMPLE_LOGINS = 50;

function positiveInt(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) {
    console.error(`${name}: expected a positive whole number, got "${raw}"`);
    process.exit(1);
  }
  return Number(raw);
}

// Below 30 s the RSS windows after the warm-up would hold a sample or two: nothing to judge.
if (SECONDS < 30) {
  console.error('SOAK_SECONDS: at least 30 (the memory check compares two windows after a 10 s warm-up)');
  process.exit(1);
}
if (BCRYPT_ROUNDS > 10 || BCRYPT_ROUNDS < 4) {
  console.error('SOAK_BCRYPT_ROUNDS: expected 4 to 10');
  process.exit(1);
}
if (!fs.existsSync(CLI)) {
  console.error('dist/cli.js is missing: run npm run build first.');
  process.exit(1);
}

const log = (message) => console.error(`[soak ${new Date().toISOString().slice(11, 19)}] ${message}`);

// ---------------------------------------------------------------------------------------------
// The services. Both must answer: a soak without them would not be the production shape.

async function redisAnswers(url) {
  const target = new URL(url);
  if (!(await answers(target.hostname, Number(target.port || 6379)))) return false;
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

const pgTarget = new URL(PG_ADMIN_URL);
if (!(await answers(pgTarget.hostname, Number(pgTarget.port || 5432)))) {
  console.error(`PostgreSQL does not answer at ${pgTarget.host} (SOAK_POSTGRES_URL): the soak needs it.`);
  process.exit(1);
}
if (!(await redisAnswers(REDIS_URL))) {
  console.error(`Redis does not answer at ${REDIS_URL} (SOAK_REDIS_URL): the soak needs it.`);
  process.exit(1);
}

const runId = `${Date.now().toString(36)}${crypto.randomBytes(3).toString('hex')}`;
const dbName = `gatehouse_soak_${runId}`;
const keyPrefix = `gatehouse-soak-${runId}`;
const dbUrl = new URL(PG_ADMIN_URL);
dbUrl.pathname = `/${dbName}`;

const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
try {
  await admin.connect();
} catch (error) {
  console.error(`PostgreSQL refused the connection (${error.message}): the soak needs it.`);
  process.exit(1);
}

const servers = [];
let interrupted = false;
// Ctrl-C still drops the database and stops the servers: the traffic loop ends, cleanup runs.
process.once('SIGINT', () => {
  interrupted = true;
  log('interrupted: stopping the traffic and cleaning up');
});

let exitCode;
try {
  await admin.query(`create database ${dbName}`);
  log(`database ${dbName}, Redis key prefix ${keyPrefix}, ${SECONDS} s, ${CONCURRENCY} requests in flight, bcrypt cost ${BCRYPT_ROUNDS}`);
  exitCode = await soak();
} catch (error) {
  console.error(error);
  exitCode = 1;
} finally {
  for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  await admin.query(`drop database if exists ${dbName} with (force)`).catch((error) => console.error(`could not drop ${dbName}: ${error.message}`));
  await admin.end().catch(() => {});
  await deleteRedisKeys().catch((error) => console.error(`could not delete the Redis keys ${keyPrefix}*: ${error.message}`));
}
process.exit(exitCode);

/** The run's counters (rate limits, locks) would otherwise linger in Redis until they expire. */
async function deleteRedisKeys() {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  try {
    let cursor = '0';
    // Bounded: SCAN over a finite keyspace returns to cursor 0; the cap only guards against a bug.
    for (let round = 0; round < 100_000; round++) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
  } finally {
    redis.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------

async function soak() {
  const env = {
    NODE_ENV: 'development', // the reset flow reads its token from the dev-mode response
    DATABASE_URL: dbUrl.toString(),
    REDIS_URL,
    REDIS_KEY_PREFIX: keyPrefix,
    JWT_SECRET: `soak-${crypto.randomBytes(24).toString('hex')}`, // shared: a session from one instance is valid on the other
    BCRYPT_ROUNDS: String(BCRYPT_ROUNDS),
    MAIL_DELIVERY: 'worker', // queue only: the servers never print or send the thousands of emails
    RATE_LIMIT_REGISTER: '999999999/1s',
    RATE_LIMIT_LOGIN: '999999999/1s',
    RATE_LIMIT_PASSWORD_RESET_REQUEST: '999999999/1s',
    RATE_LIMIT_PASSWORD_RESET_CONFIRM: '999999999/1s',
    RATE_LIMIT_RESEND_VERIFICATION: '999999999/1s',
    // The refusal stream: one verify-email per hour per IP, counted in the shared Redis, so every
    // verify-email of the run but the very first must be a 429 — on either instance.
    RATE_LIMIT_VERIFY_EMAIL: '1/1h',
    // All traffic comes from 127.0.0.1 and wrong passwords are part of it: failures are counted
    // per IP too, so the lock must never trip (at most 1000 failures within 2 s).
    LOCKOUT_MAX_FAILURES: '1000',
    LOCKOUT_DURATION: '1s',
  };

  const errorLogs = [];
  for (const name of ['A', 'B']) {
    // Started one after the other: the first applies the migrations, the second finds them done.
    let pending = '';
    const server = await startServer(env, {
      // Pino writes one JSON object per line; level 50 is error, 60 fatal.
      onOutput: (chunk) => {
        pending += chunk;
        const lines = pending.split('\n');
        pending = lines.pop();
        for (const line of lines) {
          const level = /"level":(\d+)/.exec(line)?.[1];
          if (level !== undefined && Number(level) >= 50) errorLogs.push(`${name}: ${line.slice(0, 400)}`);
        }
      },
    });
    server.name = name;
    server.exited = new Promise((resolve) => server.child.once('exit', (code, signal) => resolve({ code, signal })));
    servers.push(server);
    log(`instance ${name} pid ${server.child.pid} at ${server.url} (ready in ${Math.round(server.startupMs)} ms)`);
  }
  const unexpectedExits = [];
  for (const server of servers) server.exited.then((result) => !server.stopping && unexpectedExits.push({ name: server.name, ...result }));

  // --- bookkeeping ---------------------------------------------------------------------------
  const stats = new Map(); // kind -> { requests, statuses: Map<status, count>, unexpected }
  const unexpectedExamples = [];
  const record = (kind, status, expected, detail) => {
    let entry = stats.get(kind);
    if (!entry) stats.set(kind, (entry = { requests: 0, statuses: new Map(), unexpected: 0 }));
    entry.requests++;
    entry.statuses.set(status, (entry.statuses.get(status) ?? 0) + 1);
    if (!expected.includes(status)) {
      entry.unexpected++;
      if (unexpectedExamples.length < 10) unexpectedExamples.push(`${kind}: ${status} ${detail ?? ''}`.slice(0, 300));
    }
  };

  let requestCount = 0;
  /** One request; network errors and timeouts count as status "error" (never expected). */
  async function call(server, method, pathname, { json, rawBody, cookie } = {}) {
    requestCount++;
    try {
      const response = await fetch(server.url + pathname, {
        method,
        headers: { ...(json !== undefined || rawBody !== undefined ? { 'content-type': 'application/json' } : {}), ...(cookie ? { cookie } : {}) },
        body: json !== undefined ? JSON.stringify(json) : rawBody,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      let body = null;
      try {
        body = JSON.parse(text);
      } catch {}
      const session = response.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .find((c) => c.startsWith('gatehouse_session=') && c.length > 'gatehouse_session='.length);
      return { status: response.status, body, text, cookie: session, retryAfter: response.headers.get('retry-after') };
    } catch (error) {
      return { status: 'error', body: null, text: String(error.cause?.code ?? error.name ?? error) };
    }
  }

  // Accounts this run created. An account is taken out of `idle` while an operation uses it, so
  // a password reset never revokes a session that a concurrent session check is relying on.
  const registered = []; // { email, password, cookie }
  const idle = [];
  const take = () => (idle.length === 0 ? null : idle.splice(Math.floor(Math.random() * idle.length), 1)[0]);
  let emailCounter = 0;
  let serverTurn = 0;
  const pickServer = () => servers[serverTurn++ % servers.length];
  const other = (server) => servers[(servers.indexOf(server) + 1) % servers.length];

  // --- the kinds of traffic ------------------------------------------------------------------
  // Each is one or a few requests with the statuses it must get; weights are relative shares.
  const kinds = [
    {
      name: 'register',
      weight: 10,
      run: async (server) => {
        const email = `soak-${runId}-${emailCounter++}@soak.example`;
        const r = await call(server, 'POST', '/api/auth/register', { json: { email, password: PASSWORD } });
        record('register', r.status, [201], r.text);
        if (r.status === 201) {
          const account = { email, password: PASSWORD, cookie: r.cookie };
          registered.push(account);
          idle.push(account);
        }
      },
    },
    {
      name: 'login',
      weight: 8,
      needsAccount: true,
      run: async (server, account) => {
        const r = await call(server, 'POST', '/api/auth/login', { json: { email: account.email, password: account.password } });
        record('login', r.status, [200], r.text);
        if (r.status === 200 && r.cookie) account.cookie = r.cookie;
      },
    },
    {
      name: 'login wrong password',
      weight: 4,
      needsAccount: true,
      run: async (server, account) => {
        const r = await call(server, 'POST', '/api/auth/login', { json: { email: account.email, password: 'Wrong-Password-9' } });
        record('login wrong password', r.status, [401], r.text);
      },
    },
    {
      name: 'session valid',
      weight: 30,
      needsAccount: true,
      run: async (server, account) => {
        // Often on the other instance than the one that issued the cookie: the sessions are shared.
        const r = await call(server, 'GET', '/api/auth/session', { cookie: account.cookie });
        const same = r.status === 200 && r.body?.user?.email === account.email;
        record('session valid', same || r.status !== 200 ? r.status : 'wrong user', [200], r.text);
      },
    },
    {
      name: 'session garbage',
      weight: 15,
      run: async (server) => {
        const garbage =
          Math.random() < 0.5
            ? 'not.a.jwt'
            : `${crypto.randomBytes(12).toString('base64url')}.${crypto.randomBytes(30).toString('base64url')}.${crypto.randomBytes(32).toString('base64url')}`;
        const r = await call(server, 'GET', '/api/auth/session', { cookie: `gatehouse_session=${garbage}` });
        record('session garbage', r.status, [401], r.text);
      },
    },
    {
      name: 'bad body',
      weight: 10,
      run: async (server) => {
        const roll = Math.random();
        const r =
          roll < 0.4
            ? await call(server, 'POST', '/api/auth/login', { json: { email: 'not-an-email' } })
            : roll < 0.7
              ? await call(server, 'POST', '/api/auth/register', { json: { email: 'x@soak.example', password: 'short' } })
              : await call(server, 'POST', '/api/auth/login', { rawBody: '{"email": "broken json' });
        record('bad body', r.status, [400], r.text);
      },
    },
    {
      name: 'verify-email (rate limited)',
      weight: 10,
      run: async (server) => {
        const r = await call(server, 'POST', '/api/auth/verify-email', { json: { token: 'soak.not-a-token' } });
        if (r.status === 429 && !r.retryAfter) return record('verify-email (rate limited)', '429 without Retry-After', [429]);
        // The first verify-email of the run is within the 1/1h limit: an invalid token, 400.
        const expected = firstVerifyAllowed ? [429, 400] : [429];
        if (r.status === 400) firstVerifyAllowed = false;
        record('verify-email (rate limited)', r.status, expected, r.text);
      },
    },
    {
      name: 'password reset',
      weight: 1,
      needsAccount: true,
      run: async (server, account) => {
        const request = await call(server, 'POST', '/api/auth/password-reset/request', { json: { email: account.email } });
        record('reset request', request.status, [200], request.text);
        if (request.status !== 200 || typeof request.body?.token !== 'string') return;
        const password = `Soak-Reset-${crypto.randomBytes(6).toString('hex')}-1`;
        // Confirmed on the other instance: the token lives in the shared database.
        const confirm = await call(other(server), 'POST', '/api/auth/password-reset/confirm', { json: { token: request.body.token, password } });
        record('reset confirm', confirm.status, [200], confirm.text);
        if (confirm.status !== 200) return;
        account.password = password;
        // A reset revokes every session of the account, whichever instance checks.
        const revoked = await call(server, 'GET', '/api/auth/session', { cookie: account.cookie });
        record('session after reset', revoked.status, [401], revoked.text);
        const login = await call(other(server), 'POST', '/api/auth/login', { json: { email: account.email, password } });
        record('login after reset', login.status, [200], login.text);
        if (login.status === 200 && login.cookie) account.cookie = login.cookie;
      },
    },
  ];
  let firstVerifyAllowed = true;
  const totalWeight = kinds.reduce((sum, kind) => sum + kind.weight, 0);
  const pickKind = () => {
    let roll = Math.random() * totalWeight;
    for (const kind of kinds) if ((roll -= kind.weight) < 0) return kind;
    return kinds[0];
  };

  // --- RSS samples ---------------------------------------------------------------------------
  const started = performance.now();
  const samples = servers.map(() => []); // per instance: { t (s), mb }
  const sampleRss = () => {
    const t = (performance.now() - started) / 1000;
    servers.forEach((server, i) => {
      try {
        samples[i].push({ t, mb: procStatusMB(server.child.pid, 'VmRSS') });
      } catch {} // the process is gone: unexpectedExits says so
    });
  };
  sampleRss();
  const sampler = setInterval(sampleRss, RSS_SAMPLE_MS);

  // --- the traffic ---------------------------------------------------------------------------
  const deadline = started + SECONDS * 1000;
  let lastProgress = started;
  const worker = async () => {
    // Bounded by the deadline (and by Ctrl-C or a server dying).
    while (performance.now() < deadline && !interrupted && unexpectedExits.length === 0) {
      let kind = pickKind();
      let account = null;
      if (kind.needsAccount) {
        account = take();
        if (!account) kind = kinds[0]; // no idle account yet: register one
      }
      try {
        await kind.run(pickServer(), account);
      } finally {
        if (account) idle.push(account);
      }
      if (performance.now() - lastProgress >= 15_000) {
        lastProgress = performance.now();
        const rss = samples.map((s, i) => `${servers[i].name} ${s.at(-1)?.mb.toFixed(1)} MB`).join(', ');
        log(`${Math.round((lastProgress - started) / 1000)} s: ${requestCount} requests, ${registered.length} accounts, RSS ${rss}`);
      }
    }
  };
  log('traffic started');
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const trafficSeconds = (performance.now() - started) / 1000;
  sampleRss();
  clearInterval(sampler);
  log(`traffic stopped after ${trafficSeconds.toFixed(1)} s: ${requestCount} requests`);

  // --- after the traffic: every 201 is in the database; a sample can sign in -----------------
  const checks = [];
  const check = (name, ok, detail) => checks.push({ name, ok, detail });

  const count = new pg.Client({ connectionString: dbUrl.toString() });
  await count.connect();
  let stored;
  try {
    const emails = registered.map((account) => account.email);
    const { rows } = await count.query('select count(*)::int as n from users where email = any($1::text[])', [emails]);
    stored = rows[0].n;
  } finally {
    await count.end();
  }
  check('every 201 registration is stored', stored === registered.length, `${stored} of ${registered.length} in users`);

  const sample = [...registered].sort(() => Math.random() - 0.5).slice(0, SAMPLE_LOGINS);
  let signedIn = 0;
  for (const [i, account] of sample.entries()) {
    const server = servers[i % servers.length];
    const login = await call(server, 'POST', '/api/auth/login', { json: { email: account.email, password: account.password } });
    record('final login sample', login.status, [200], login.text);
    if (login.status !== 200 || !login.cookie) continue;
    const session = await call(other(server), 'GET', '/api/auth/session', { cookie: login.cookie });
    const ok = session.status === 200 && session.body?.user?.email === account.email;
    record('final session sample', ok || session.status !== 200 ? session.status : 'wrong user', [200], session.text);
    if (ok) signedIn++;
  }
  check(
    `a random sample of ${sample.length} signs in and reads its session on the other instance`,
    signedIn === sample.length && sample.length > 0,
    `${signedIn} of ${sample.length}`,
  );

  // --- stop: SIGTERM, exit 0 -----------------------------------------------------------------
  const exits = [];
  for (const server of servers) {
    server.stopping = true;
    server.child.kill('SIGTERM');
  }
  for (const server of servers) {
    const result = await Promise.race([server.exited, sleep(20_000).then(() => ({ code: 'timeout', signal: null }))]);
    exits.push({ name: server.name, ...result });
  }

  // --- the figures ---------------------------------------------------------------------------
  let fiveXx = 0;
  let unexpected = 0;
  let total = 0;
  for (const entry of stats.values()) {
    total += entry.requests;
    unexpected += entry.unexpected;
    for (const [status, n] of entry.statuses) if (typeof status === 'number' && status >= 500) fiveXx += n;
  }
  check('no 5xx', fiveXx === 0, `${fiveXx}`);
  check('no unexpected status (or network error)', unexpected === 0, `${unexpected}`);
  check('no server logged an error', errorLogs.length === 0, `${errorLogs.length}`);
  check('no server exited during the run', unexpectedExits.length === 0, unexpectedExits.map((e) => `${e.name}: ${e.code ?? e.signal}`).join(', ') || 'none');
  for (const exit of exits) check(`instance ${exit.name} exits 0 on SIGTERM`, exit.code === 0, `exit ${exit.code ?? exit.signal}`);
  check('the traffic ran its whole length', !interrupted && trafficSeconds >= SECONDS, `${trafficSeconds.toFixed(1)} of ${SECONDS} s`);
  const refusal = stats.get('verify-email (rate limited)');
  check('the refusal stream was refused (429)', (refusal?.statuses.get(429) ?? 0) > 0, `${refusal?.statuses.get(429) ?? 0} × 429`);

  // First vs last minute of RSS. With a run shorter than WARMUP + 2 minutes the two windows are
  // each half of the time after the warm-up, so they never overlap.
  const window = Math.max(0, Math.min(60, (trafficSeconds - WARMUP_SECONDS) / 2));
  // NaN (shown as such, and failing the check) when an interrupted run left a window empty.
  const average = (list) => (list.length === 0 ? NaN : list.reduce((sum, s) => sum + s.mb, 0) / list.length);
  const rss = samples.map((list, i) => {
    const first = list.filter((s) => s.t >= WARMUP_SECONDS && s.t < WARMUP_SECONDS + window);
    const last = list.filter((s) => s.t >= trafficSeconds - window);
    const firstMB = average(first);
    const lastMB = average(last);
    return { name: servers[i].name, firstMB, lastMB, ratio: lastMB / firstMB, peakMB: Math.max(...list.map((s) => s.mb)), n: list.length };
  });
  for (const r of rss)
    check(
      `instance ${r.name} RSS flat (last / first window ≤ 1.20)`,
      r.ratio <= 1.2,
      Number.isFinite(r.ratio) ? `${r.ratio.toFixed(2)}×` : 'no samples in a window',
    );

  const fmt = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : String(value));
  console.log(
    `\nGatehouse soak — ${SECONDS} s, 2 instances, PostgreSQL + Redis, ${CONCURRENCY} in flight, bcrypt cost ${BCRYPT_ROUNDS}, ${os.availableParallelism()} cores, Node ${process.version}, ${new Date().toISOString()}\n`,
  );
  console.log('| kind | requests | statuses | unexpected |');
  console.log('|---|---|---|---|');
  for (const [kind, entry] of stats) {
    const statuses = [...entry.statuses]
      .sort(([a], [b]) => String(a).localeCompare(String(b)))
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ');
    console.log(`| ${kind} | ${entry.requests} | ${statuses} | ${entry.unexpected} |`);
  }
  console.log(`| **all** | ${total} (${fmt(total / trafficSeconds)}/s) | 5xx: ${fiveXx} | ${unexpected} |`);
  console.log(`\n| instance | RSS first window | RSS last window | last / first | peak | samples |`);
  console.log('|---|---|---|---|---|---|');
  for (const r of rss)
    console.log(
      `| ${r.name} | ${fmt(r.firstMB)} MB | ${fmt(r.lastMB)} MB | ${fmt(r.ratio, 2)}× ${r.ratio > 1.2 ? '**GROWTH > 20 %**' : ''} | ${fmt(r.peakMB)} MB | ${r.n} |`,
    );
  console.log(
    `\n(windows: ${fmt(WARMUP_SECONDS, 0)}–${fmt(WARMUP_SECONDS + window, 0)} s and the last ${fmt(window, 0)} s of ${fmt(trafficSeconds, 0)} s, sampled every ${RSS_SAMPLE_MS / 1000} s)`,
  );
  console.log(`\nregistrations: ${registered.length} answered 201, ${stored} stored, ${signedIn} of ${sample.length} sampled signed in\n`);
  console.log('| check | result | ok |');
  console.log('|---|---|---|');
  for (const c of checks) console.log(`| ${c.name} | ${c.detail} | ${c.ok ? 'yes' : 'NO'} |`);
  if (unexpectedExamples.length > 0)
    console.log(`\nunexpected answers (first ${unexpectedExamples.length}):\n${unexpectedExamples.map((e) => `  ${e}`).join('\n')}`);
  if (errorLogs.length > 0)
    console.log(
      `\nserver error logs (first 5 of ${errorLogs.length}):\n${errorLogs
        .slice(0, 5)
        .map((e) => `  ${e}`)
        .join('\n')}`,
    );
  const failed = checks.filter((c) => !c.ok);
  console.log(failed.length === 0 ? '\nsoak passed' : `\nsoak FAILED: ${failed.map((c) => c.name).join('; ')}`);
  return failed.length === 0 ? 0 : 1;
}
