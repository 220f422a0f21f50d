// npm run bench:webhooks: what webhooks cost on the sign-in paths, and how fast one worker sends
// them, on SQLite and, when it answers, on PostgreSQL (a database of its own, dropped after).
//
// The server runs with WEBHOOK_DELIVERY=worker, so nothing is sent while it is loaded: every
// event waits as a pending delivery. Per backend:
// 1. Register and login throughput without an endpoint and with one endpoint for ["*"] (pointing
//    at a receiver in this process), in alternating rounds, each load compared with the machine's
//    bcrypt limit measured right around it, as npm run bench does (targets: login ≥ 0.90 ×,
//    register ≥ 0.80 × the limit). The with/without ratio is what writing the event and its
//    delivery row in the request's transaction costs.
// 2. The pending deliveries the loads left (counted in the database), then `gatehouse webhooks
//    worker --once` as an operator runs it, timed from spawn to exit: deliveries per second. The
//    receiver answers 204 at once, counts requests, checks every webhook-id is new and verifies the
//    signature of 100 of them with the standardwebhooks package. The same again on a larger
//    backlog (accounts imported over the admin API, one user.created each), where the worker's
//    start weighs less.
// 3. The worker's peak RSS (VmHWM, read from /proc while it runs).
//
// Logins are spread over 32 accounts: one person's events reach an endpoint in order (the next
// waits for the previous), so the logins of a single account would be sent one at a time.
// The last line of stdout is the figures as JSON; --quick shortens every load and the import.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import bcrypt from 'bcrypt';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { answers, CLI, procStatusMB, runJson, sleep, startServer } from './lib.mjs';

const PASSWORD = 'Bench-Password-1';
const LOGIN_ACCOUNTS = 32;
const SAMPLE = 100;
const quick = process.argv.includes('--quick');
/** Accounts imported for the second, larger backlog (one user.created each). */
const IMPORTED = quick ? 2_000 : 10_000;
/** Rounds of loads without and with the endpoint. */
const ROUNDS = 2;
const SECONDS = quick ? 3 : 8;
const WORKER_TIMEOUT_MS = 180_000;
const PG_DATABASE = 'gatehouse_bench_webhooks';

if (!fs.existsSync(CLI)) {
  console.error('dist/cli.js is missing: run npm run build first.');
  process.exit(1);
}

const load = (spec) => runJson('load.mjs', [JSON.stringify(spec)]);
const mean = (a, b) => (a + b) / 2;
/** The machine's bcrypt ceiling right now (cost 10, one thread per core), as npm run bench measures it. */
const hashLimit = async () => (await runJson('hash-limit.mjs', ['10', quick ? '2' : '4'])).hashesPerSecond;
const fmt = (value, digits = 0) =>
  typeof value === 'number' && Number.isFinite(value)
    ? value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : String(value);

function commonEnv() {
  return {
    NODE_ENV: 'development', // outside production a receiver on 127.0.0.1 over http is allowed
    JWT_SECRET: 'bench-secret-0123456789-0123456789-0123456789',
    ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'),
    ADMIN_API_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_DELIVERY: 'worker', // the server queues only: `gatehouse webhooks worker` sends
    BCRYPT_ROUNDS: '10',
    MAIL_DELIVERY: 'worker',
    RATE_LIMIT_REGISTER: '999999999/1s',
    RATE_LIMIT_LOGIN: '999999999/1s',
    LOCKOUT_MAX_FAILURES: '1000',
  };
}

/** The endpoint: node:http on 127.0.0.1 answering 204 at once, keeping what the checks need. */
async function startReceiver() {
  const fresh = () => ({ count: 0, ids: new Set(), duplicates: 0, samples: [], byType: {}, first: 0, last: 0 });
  let seen = fresh();
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const now = performance.now();
      if (seen.count === 0) seen.first = now;
      seen.last = now;
      seen.count += 1;
      const id = request.headers['webhook-id'];
      if (seen.ids.has(id)) seen.duplicates += 1;
      else seen.ids.add(id);
      const body = Buffer.concat(chunks).toString('utf8');
      const type = JSON.parse(body).type;
      seen.byType[type] = (seen.byType[type] ?? 0) + 1;
      if (seen.samples.length < SAMPLE) seen.samples.push({ body, headers: { ...request.headers } });
      response.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks`,
    /** What was received since the last take; counting starts again. */
    take: () => {
      const taken = seen;
      seen = fresh();
      return taken;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Signatures of the kept requests that the standardwebhooks package accepts with the endpoint's secret. */
function verified(samples, secret) {
  const webhook = new Webhook(secret);
  let ok = 0;
  for (const { body, headers } of samples) {
    try {
      webhook.verify(body, headers);
      ok += 1;
    } catch (error) {
      console.error(`signature refused: ${error.message}`);
    }
  }
  return ok;
}

async function api(url, method, pathname, { json, bearer } = {}) {
  const response = await fetch(url + pathname, {
    method,
    headers: { ...(json ? { 'content-type': 'application/json' } : {}), ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: json ? JSON.stringify(json) : undefined,
  });
  return { status: response.status, body: await response.json().catch(() => null) };
}

/** Counts read from the database itself, on each backend. */
function sqliteBackend(file) {
  const read = (query) => {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      return db.prepare(query).all();
    } finally {
      db.close();
    }
  };
  return { query: async (query) => read(query) };
}

function postgresBackend(connectionString) {
  return {
    async query(query) {
      const client = new pg.Client({ connectionString });
      await client.connect();
      try {
        return (await client.query(query)).rows;
      } finally {
        await client.end();
      }
    },
  };
}

/** Events written so far, by type: how many, and for how many distinct users. */
async function eventCounts(backend) {
  const rows = await backend.query('select type, count(*) as n, count(distinct user_id) as users from webhook_events group by type');
  return Object.fromEntries(rows.map((row) => [row.type, { events: Number(row.n), users: Number(row.users) }]));
}

/** Deliveries by status, and the pending ones by event type. */
async function pendingCounts(backend) {
  const statuses = Object.fromEntries(
    (await backend.query('select status, count(*) as n from webhook_deliveries group by status')).map((row) => [row.status, Number(row.n)]),
  );
  const pendingByType = Object.fromEntries(
    (
      await backend.query(
        "select e.type, count(*) as n from webhook_deliveries d join webhook_events e on e.id = d.event_id where d.status = 'pending' group by e.type",
      )
    ).map((row) => [row.type, Number(row.n)]),
  );
  return { pending: statuses.pending ?? 0, delivered: statuses.delivered ?? 0, failed: statuses.failed ?? 0, pendingByType };
}

/** `gatehouse webhooks worker --once` as an operator runs it, its peak RSS sampled until it exits. */
function runWorker(env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, 'webhooks', 'worker', '--once'], {
      env: { PATH: process.env.PATH, ENV_FILE: '/dev/null', ...env, LOG_LEVEL: 'info', LOG_FORMAT: 'json' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    let peakMB = 0;
    const sample = setInterval(() => {
      try {
        peakMB = Math.max(peakMB, procStatusMB(child.pid, 'VmHWM'));
      } catch {
        // The process has just exited: the last sample stands.
      }
    }, 10);
    const timeout = setTimeout(() => child.kill('SIGKILL'), WORKER_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearInterval(sample);
      clearTimeout(timeout);
      const lines = output
        .split('\n')
        .map((line) => {
          try {
            return JSON.parse(line);
          } catch {
            return null;
          }
        })
        .filter(Boolean);
      const report = lines.find((line) => line.msg === 'webhook deliveries drained') ?? null;
      resolve({ code, signal, seconds: (performance.now() - started) / 1000, peakMB, report, output });
    });
  });
}

/** Register and login loads at 16 connections, as npm run bench runs them. */
function loads(url, emails) {
  const headers = { 'content-type': 'application/json' };
  return {
    register: async () =>
      (
        await load({
          url,
          method: 'POST',
          path: '/api/auth/register',
          body: { password: PASSWORD },
          uniqueEmail: true,
          connections: 16,
          duration: SECONDS,
          headers,
        })
      ).statuses['2xx'] / SECONDS,
    login: async () =>
      (await load({ url, method: 'POST', path: '/api/auth/login', body: { password: PASSWORD }, emails, connections: 16, duration: SECONDS, headers }))
        .statuses['2xx'] / SECONDS,
  };
}

/** Total of the events written so far. */
const eventTotal = async (backend) => Object.values(await eventCounts(backend)).reduce((sum, { events }) => sum + events, 0);

/**
 * Register and login loads, ROUNDS times without and with the endpoint, alternating (without,
 * with, without, with…), a measure of the hash limit after each: a shared machine drifts, and
 * alternating spreads the drift over both. The first "without" has no endpoint registered; the
 * later ones have it disabled, which costs the request the same (one read of the endpoints, no
 * write: src/db/webhook-event-store.ts) and keeps its deliveries for the worker.
 */
async function loadRounds(label, server, emails, receiverUrl, adminKey, backend) {
  const { url } = server;
  const run = loads(url, emails);
  const limits = [await hashLimit()];
  const measured = [];
  const measureOne = async (kind, endpoint) => {
    const rps = await run[kind]();
    await settle(server.child.pid);
    limits.push(await hashLimit());
    measured.push({ kind, endpoint, rps, ratio: rps / mean(limits.at(-2), limits.at(-1)) });
  };
  let secret = null;
  let webhookId = null;
  let eventsWithoutEndpoint = 0;
  for (let round = 0; round < ROUNDS; round++) {
    console.error(`[${label}] round ${round + 1} of ${ROUNDS}: ${round === 0 ? 'no endpoint' : 'the endpoint disabled'}, register then login`);
    if (webhookId !== null) await expectOk(await api(url, 'PATCH', `/api/admin/webhooks/${webhookId}`, { json: { enabled: false }, bearer: adminKey }));
    const eventsBefore = await eventTotal(backend);
    await measureOne('register', false);
    await measureOne('login', false);
    eventsWithoutEndpoint += (await eventTotal(backend)) - eventsBefore;
    if (webhookId === null) {
      const created = await api(url, 'POST', '/api/admin/webhooks', { json: { url: receiverUrl, events: ['*'] }, bearer: adminKey });
      if (created.status !== 201 || typeof created.body?.secret !== 'string') {
        throw new Error(`POST /api/admin/webhooks answered ${created.status}: ${JSON.stringify(created.body)}`);
      }
      secret = created.body.secret;
      webhookId = created.body.webhook.id;
    } else {
      await expectOk(await api(url, 'PATCH', `/api/admin/webhooks/${webhookId}`, { json: { enabled: true }, bearer: adminKey }));
    }
    console.error(`[${label}] round ${round + 1} of ${ROUNDS}: one endpoint for ["*"], register then login`);
    await measureOne('register', true);
    await measureOne('login', true);
  }
  return { secret, hashLimits: limits, measured, eventsWithoutEndpoint };
}

function expectOk(result) {
  if (result.status !== 200) throw new Error(`the admin API answered ${result.status}: ${JSON.stringify(result.body)}`);
}

/**
 * Waits until the server has finished what a load left in flight (autocannon stops with up to 16
 * requests still hashing): its CPU use, all threads, falls under a tenth of a core. Otherwise that
 * work would weigh on the hash limit measured next, and its events would arrive after the count.
 */
async function settle(pid) {
  const ticks = () => {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime, in USER_HZ (100 a second)
  };
  try {
    let last = ticks();
    for (let i = 0; i < 50; i++) {
      await sleep(200);
      const now = ticks();
      if (now - last <= 2) return;
      last = now;
    }
  } catch {
    // No /proc (not Linux): a fixed pause instead.
    await sleep(2000);
  }
}

async function measure(label, env, backend) {
  const receiver = await startReceiver();
  console.error(`\n[${label}] starting the server (WEBHOOK_DELIVERY=worker)`);
  const server = await startServer(env);
  const { url } = server;
  const figures = { label };
  try {
    const emails = Array.from({ length: LOGIN_ACCOUNTS }, (_, i) => `login-${i}@bench.example`);
    for (let i = 0; i < emails.length; i += 4) {
      const batch = await Promise.all(emails.slice(i, i + 4).map((email) => api(url, 'POST', '/api/auth/register', { json: { email, password: PASSWORD } })));
      const refused = batch.find((result) => result.status !== 201 && result.status !== 200);
      if (refused) throw new Error(`registering a login account answered ${refused.status}: ${JSON.stringify(refused.body)}`);
    }
    const { secret, ...loadFigures } = await loadRounds(label, server, emails, receiver.url, env.ADMIN_API_KEY, backend);
    Object.assign(figures, loadFigures);
    figures.events = await eventCounts(backend);
    // Nothing may have been sent while the server only queued.
    figures.sentByServer = receiver.take().count;

    // The worker runs beside the (now idle) server, as it would in service.
    figures.loadBacklog = await deliverBacklog(`[${label}] the loads' events:`, env, backend, receiver, secret);

    // A larger backlog, so that the worker's start (about a second) weighs less: accounts imported
    // over the admin API, one user.created each (the import stores hashes as given: no bcrypt).
    console.error(`[${label}] importing ${fmt(IMPORTED)} accounts over the admin API`);
    const imported = await importAccounts(url, env.ADMIN_API_KEY);
    if (imported.status !== 200 || imported.body?.imported !== IMPORTED) {
      throw new Error(`POST /api/admin/users/import answered ${imported.status}: ${JSON.stringify(imported.body)?.slice(0, 500)}`);
    }
    figures.importBacklog = await deliverBacklog(`[${label}] the import's events:`, env, backend, receiver, secret);
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
    await receiver.close();
  }
  return figures;
}

/** The pending deliveries, `gatehouse webhooks worker --once` on them, and what the receiver got. */
async function deliverBacklog(what, env, backend, receiver, secret) {
  const before = await pendingCounts(backend);
  console.error(`${what} ${fmt(before.pending)} pending deliveries, gatehouse webhooks worker --once`);
  const worker = await runWorker(env);
  if (worker.code !== 0) console.error(`${what} the worker exited ${worker.code ?? worker.signal}:\n${worker.output}`);
  const seen = receiver.take();
  const after = await pendingCounts(backend);
  return {
    before,
    after,
    worker: { code: worker.code, signal: worker.signal, seconds: worker.seconds, peakMB: worker.peakMB, report: worker.report },
    received: seen.count,
    receivedByType: seen.byType,
    uniqueIds: seen.ids.size,
    duplicateIds: seen.duplicates,
    receiverSeconds: (seen.last - seen.first) / 1000,
    verified: verified(seen.samples, secret),
    sampled: seen.samples.length,
  };
}

/** IMPORTED accounts in one NDJSON body, all with one real bcrypt hash (never verified here). */
async function importAccounts(url, adminKey) {
  const hash = await bcrypt.hash(PASSWORD, 10);
  const lines = Array.from({ length: IMPORTED }, (_, i) => JSON.stringify({ email: `imported-${i}@bench.example`, password: { algorithm: 'bcrypt', hash } }));
  const response = await fetch(`${url}/api/admin/users/import`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${adminKey}` },
    body: lines.join('\n') + '\n',
  });
  return { status: response.status, body: await response.json().catch(() => null) };
}

/**
 * What this machine does in this run without Gatehouse (plain node:http answering a fixed JSON
 * body, 32 connections), as npm run bench prints it: a shared machine's speed drifts.
 */
async function machineReference() {
  const server = http.createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{"ok":true}');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const spec = { url: `http://127.0.0.1:${server.address().port}`, path: '/', connections: 32 };
    await load({ ...spec, duration: 1 });
    return (await load({ ...spec, duration: 3 })).statuses['2xx'] / 3;
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const runs = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-webhooks-'));
const cores = os.availableParallelism();
console.error(`Gatehouse webhooks benchmark — ${cores} cores, ${os.cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`);
console.error('[machine] plain node:http, before the runs');
const referenceBefore = await machineReference();
try {
  const file = path.join(dir, 'bench.db');
  runs.push(await measure('SQLite', { ...commonEnv(), DATABASE_URL: `sqlite:${file}` }, sqliteBackend(file)));

  const baseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const target = new URL(baseUrl);
  if (await answers(target.hostname, Number(target.port || 5432))) {
    // A database of its own, dropped after: the shared database and its schemas are never touched.
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${PG_DATABASE} with (force)`);
    await admin.query(`create database ${PG_DATABASE}`);
    const benchUrl = new URL(baseUrl);
    benchUrl.pathname = `/${PG_DATABASE}`;
    benchUrl.search = '';
    try {
      runs.push(await measure('PostgreSQL', { ...commonEnv(), DATABASE_URL: benchUrl.toString() }, postgresBackend(benchUrl.toString())));
    } finally {
      await admin.query(`drop database if exists ${PG_DATABASE} with (force)`);
      await admin.end();
    }
  } else {
    console.error(`PostgreSQL does not answer at ${target.host}: measuring SQLite only.`);
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
console.error('[machine] plain node:http, after the runs');
const referenceAfter = await machineReference();

// ---------------------------------------------------------------------------------------------

/** The loads of one kind, with or without the endpoint: mean requests per second, mean ratio to the hash limit around each. */
const figure = (f, kind, endpoint) => {
  const loads = f.measured.filter((one) => one.kind === kind && one.endpoint === endpoint);
  return { rps: loads.reduce((sum, one) => sum + one.rps, 0) / loads.length, ratio: loads.reduce((sum, one) => sum + one.ratio, 0) / loads.length };
};
const each = (f, kind, endpoint) =>
  f.measured
    .filter((one) => one.kind === kind && one.endpoint === endpoint)
    .map((one) => fmt(one.ratio, 2))
    .join(', ');
const throughputRow = (kind, endpoint, floor) => ({
  name: `${kind}, ${endpoint ? 'one endpoint for ["*"]' : 'no endpoint (none, then one disabled)'}: mean of ${ROUNDS}, to the hash limit around each`,
  show: (f) => `${fmt(figure(f, kind, endpoint).rps, 1)}/s = ${fmt(figure(f, kind, endpoint).ratio, 2)}× (${each(f, kind, endpoint)})`,
  target: `≥ ${fmt(floor, 2)} × hash limit`,
  ok: (f) => figure(f, kind, endpoint).ratio >= floor,
});
const costRow = (kind) => ({
  name: `${kind}: with endpoint / without`,
  show: (f) => fmt(figure(f, kind, true).ratio / figure(f, kind, false).ratio, 2),
  target: '',
});
const perSecond = (b) => b.received / b.worker.seconds;
const userCreated = (f) => f.events['user.created'] ?? { events: 0, users: 0 };
const breakdown = (b) =>
  Object.entries(b.before.pendingByType)
    .map(([type, count]) => `${fmt(count)} ${type}`)
    .join(', ');
/** The rows of one `worker --once` run, on the backlog `key` of the figures. */
const workerRows = (key, what) => [
  { name: `${what}: pending deliveries`, show: (f) => `${fmt(f[key].before.pending)} (${breakdown(f[key])})`, target: '' },
  {
    name: `${what}: received / pending, unique webhook-ids, signatures verified`,
    show: (f) => `${fmt(f[key].received)} / ${fmt(f[key].before.pending)}, ${fmt(f[key].uniqueIds)} unique, ${f[key].verified} of ${f[key].sampled}`,
    target: 'all, all unique, all verified',
    ok: (f) => {
      const b = f[key];
      return (
        b.worker.code === 0 &&
        b.received === b.before.pending &&
        b.after.pending === 0 &&
        b.duplicateIds === 0 &&
        b.uniqueIds === b.received &&
        b.verified === b.sampled &&
        b.sampled === Math.min(SAMPLE, b.received)
      );
    },
  },
  {
    name: `${what}: deliveries per second, worker spawn to exit`,
    show: (f) => `${fmt(perSecond(f[key]))}/s (${fmt(f[key].worker.seconds, 2)} s)`,
    target: '≥ 200/s',
    ok: (f) => perSecond(f[key]) >= 200,
  },
  {
    name: `${what}: deliveries per second at the receiver, first to last request`,
    show: (f) => `${fmt((f[key].received - 1) / f[key].receiverSeconds)}/s (${fmt(f[key].receiverSeconds, 2)} s)`,
    target: '',
  },
  { name: `${what}: worker peak RSS`, show: (f) => `${fmt(f[key].worker.peakMB, 1)} MB`, target: '' },
];
const rows = [
  {
    name: 'hash limit (bcrypt cost 10, all cores): at the start, then after each load',
    show: (f) => f.hashLimits.map((limit) => fmt(limit, 1)).join(', ') + ' /s',
    target: '',
  },
  throughputRow('login', false, 0.9),
  throughputRow('login', true, 0.9),
  costRow('login'),
  throughputRow('register', false, 0.8),
  throughputRow('register', true, 0.8),
  costRow('register'),
  {
    name: 'events written while no endpoint was enabled',
    show: (f) => fmt(f.eventsWithoutEndpoint),
    target: '0',
    ok: (f) => f.eventsWithoutEndpoint === 0,
  },
  {
    name: 'user.created events per registered account',
    show: (f) => `${fmt(userCreated(f).events)} for ${fmt(userCreated(f).users)} accounts = ${fmt(userCreated(f).events / userCreated(f).users, 2)}`,
    target: '1.00',
    ok: (f) => userCreated(f).events === userCreated(f).users,
  },
  { name: 'sent by the server during the loads (WEBHOOK_DELIVERY=worker)', show: (f) => fmt(f.sentByServer), target: '0', ok: (f) => f.sentByServer === 0 },
  ...workerRows('loadBacklog', "the loads' events"),
  ...workerRows('importBacklog', `${fmt(IMPORTED)} imported accounts' events`),
];

const verdict = (row, figures) => {
  const met = row.target && row.ok ? row.ok(figures) : null;
  return met === null ? '' : met ? 'met' : '**NOT MET**';
};
console.log(`\nGatehouse webhooks benchmark${quick ? ' (--quick)' : ''} — ${cores} cores, Node ${process.version}, ${new Date().toISOString()}`);
console.log(
  `This machine in this run: plain node:http answers ${fmt(referenceBefore)}/s before the runs and ${fmt(referenceAfter)}/s after (fixed JSON, 32 connections).\n`,
);
console.log(`| measure | ${runs.map((run) => run.label).join(' | ')} | target |`);
console.log(`|---|${runs.map(() => '---|').join('')}---|`);
for (const row of rows) {
  const cells = runs.map((run) => `${row.show(run)} ${verdict(row, run)}`.trim());
  console.log(`| ${row.name} | ${cells.join(' | ')} | ${row.target} |`);
}
console.log(JSON.stringify({ quick, cores, referenceBefore, referenceAfter, runs }));
