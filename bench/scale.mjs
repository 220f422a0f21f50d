// npm run bench:scale: the first step of "a million users". Seeds a database directly (not through
// the HTTP API, which would measure bcrypt a million times) with N users, N sessions (half
// expired), 20×N audit rows over a year and N/10 provider links, on SQLite and on PostgreSQL, and
// measures what a big database could slow down, each beside the same measure on the empty
// database in the same run (a shared machine drifts from one run to the next): the session check,
// the admin searches, the sweep of expired sessions under session checks, the export's memory, and
// the rates of sign-in and sign-up with the timing parity of a known and an unknown address.
//
//   node bench/scale.mjs [--factor F] [--audit-factor A] [--only session,search,sweep,export,migration,login]
//
// --factor scales every count (default 1: 1,000,000 users); --audit-factor scales the audit rows
// alone (default: the factor), since 20 million rows take long to write and much disk. --only
// runs some of the measures (every table is seeded all the same). The migration measure undoes
// a migration that builds indexes over a big table before seeding — `--migration 021` (default:
// the audit search's indexes over the audit rows) or `--migration 020` (the user search's over
// the users) — and times `gatehouse migrate` applying it again to the seeded database, with
// (PostgreSQL) the longest wait of a write to that table meanwhile.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import bcrypt from 'bcrypt';
import Database from 'better-sqlite3';
import pg from 'pg';
import { answers, CLI, procStatusMB, root, sleep, startServer } from './lib.mjs';

if (!fs.existsSync(CLI)) {
  console.error('dist/cli.js is missing: run npm run build first.');
  process.exit(1);
}
// The built modules, so that tokens and the sweep are exactly the server's.
const { createSessionTokenCodec } = await import(pathToFileURL(path.join(root, 'dist/session/token.js')).href);
const { createGatehouse } = await import(pathToFileURL(path.join(root, 'dist/gatehouse.js')).href);
const { loadConfig } = await import(pathToFileURL(path.join(root, 'dist/config.js')).href);
const { normalizePassword } = await import(pathToFileURL(path.join(root, 'dist/credentials/rules.js')).href);

function argument(name, fallback) {
  const at = process.argv.indexOf(name);
  if (at === -1) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!(value > 0)) throw new Error(`${name} needs a positive number`);
  return value;
}
function listArgument(name, allowed) {
  const at = process.argv.indexOf(name);
  if (at === -1) return allowed;
  const names = (process.argv[at + 1] ?? '').split(',').filter(Boolean);
  const unknown = names.filter((item) => !allowed.includes(item));
  if (names.length === 0 || unknown.length > 0) throw new Error(`${name} takes a comma-separated list of ${allowed.join(', ')}`);
  return names;
}
const FACTOR = argument('--factor', 1);
const MEASURES = listArgument('--only', ['session', 'search', 'sweep', 'export', 'migration', 'login']);
const measuring = (name) => MEASURES.includes(name);
/** The migrations the migration measure can time, each with the write to its table that waits for it. */
const TIMED_MIGRATIONS = {
  '020': {
    name: '020-user-search-index',
    table: 'users',
    write: (client, id) => client.query('update users set last_login_at = $1 where id = $2', [Date.now(), id]),
  },
  '021': {
    name: '021-audit-search-order',
    table: 'audit_events',
    write: (client, id) =>
      client.query(`insert into audit_events (event_type, user_id, ip, user_agent, metadata, created_at) values ('logout', $1, null, null, '{}', $2)`, [
        id,
        Date.now(),
      ]),
  },
};
const TIMED = TIMED_MIGRATIONS[process.argv.includes('--migration') ? process.argv[process.argv.indexOf('--migration') + 1] : '021'];
if (TIMED === undefined) throw new Error(`--migration takes ${Object.keys(TIMED_MIGRATIONS).join(' or ')}`);
const TIMED_MIGRATION = TIMED.name;
const AUDIT_FACTOR = argument('--audit-factor', FACTOR);
const COUNTS = {
  users: Math.max(20, Math.round(1_000_000 * FACTOR)),
  sessions: Math.max(20, Math.round(1_000_000 * FACTOR)),
  audit: Math.max(20, Math.round(20_000_000 * AUDIT_FACTOR)),
  accounts: Math.max(2, Math.round(100_000 * FACTOR)),
};
const BATCH = 10_000;
const PASSWORD = 'Scale-Bench-Password-1';
const KNOWN = 5;
const SECONDS = 5;
const SEARCHES = 50;
const PARITY_PAIRS = 30;
const PARITY_WARM_UP = 20;
const DAY = 86_400_000;
const JWT_SECRET = 'bench-secret-0123456789-0123456789-0123456789';
const ADMIN_KEY = 'scale-bench-admin-key-0123456789abcdef';
const NOW = Date.now();

const env = () => ({
  NODE_ENV: 'production',
  ALLOW_INSECURE_BASE_URL: 'true',
  METRICS_PUBLIC: 'true',
  JWT_SECRET,
  BCRYPT_ROUNDS: '10',
  MAIL_DELIVERY: 'worker',
  ADMIN_API_KEY: ADMIN_KEY,
  RATE_LIMIT_ADMIN: '999999999/1s',
  RATE_LIMIT_LOGIN: '999999999/1s',
  RATE_LIMIT_REGISTER: '999999999/1s',
  // The parity measure's wrong passwords for a known address must not lock it.
  LOCKOUT_MAX_FAILURES: '1000',
  // Audit rows span the last 365 days: kept, so that the sweep measured is that of the sessions.
  AUDIT_RETENTION_DAYS: '400',
});

// --- rows --------------------------------------------------------------------------------------

const hex = (value, width) => value.toString(16).padStart(width, '0').slice(-width);
/** A UUID-shaped id per index: unique (the index is its last group), scattered (the first group is a hash), as random UUIDs are in an index. */
const userId = (i) =>
  `${hex(Math.imul(i + 1, 0x9e3779b1) >>> 0, 8)}-${hex(Math.imul(i + 7, 0x85ebca6b) >>> 16, 4)}-4${hex(i >>> 4, 3)}-8${hex(i, 3)}-${hex(i, 12)}`;
const rowId = (kind, i) => `${hex(Math.imul(i + 3, 0xc2b2ae35) >>> 0, 8)}-${hex(kind, 4)}-4000-8000-${hex(i, 12)}`;
const knownEmail = (k) => `known-${k}@scale.bench`;
const EVENT_TYPES = ['login_success', 'login_success', 'login_success', 'login_failure', 'logout', 'session_revoked', 'password_changed', 'user_created'];

const TABLES = {
  users: {
    columns: ['id', 'email', 'password_hash', 'email_verified', 'preferences', 'created_at', 'last_login_at', 'password_unproven'],
    types: ['text', 'text', 'text', 'int', 'text', 'bigint', 'bigint', 'int'],
    row: (i, ctx) => [
      userId(i),
      `user-${i}@scale.example`,
      ctx.hash,
      i % 4 === 0 ? 0 : 1,
      '{}',
      NOW - 2 * 365 * DAY + Math.floor((i / COUNTS.users) * 2 * 365 * DAY),
      NOW - (i % 90) * DAY,
      0,
    ],
  },
  sessions: {
    columns: ['id', 'user_id', 'token_hash', 'expires_at', 'created_at', 'ip', 'user_agent', 'last_seen_at', 'methods'],
    types: ['text', 'text', 'text', 'bigint', 'bigint', 'text', 'text', 'bigint', 'text'],
    // Even rows expired (1 to 30 days ago), odd rows valid for up to 30 days more.
    row: (i) => {
      const expires = i % 2 === 0 ? NOW - (1 + (i % 30)) * DAY : NOW + (1 + (i % 30)) * DAY;
      return [
        rowId(1, i),
        userId(i % COUNTS.users),
        randomBytes(32).toString('hex'),
        expires,
        expires - 30 * DAY,
        `198.51.100.${i % 250}`,
        'Mozilla/5.0 (scale bench)',
        expires - 30 * DAY,
        'password',
      ];
    },
  },
  audit_events: {
    columns: ['event_type', 'user_id', 'ip', 'user_agent', 'metadata', 'created_at'],
    types: ['text', 'text', 'text', 'text', 'text', 'bigint'],
    // In time order over the last 365 days (ids grow with time, as a real trail's do); users scattered.
    row: (i) => {
      const user = Math.imul(i, 0x27d4eb2d) >>> 0;
      return [
        EVENT_TYPES[i % EVENT_TYPES.length],
        userId(user % COUNTS.users),
        `203.0.113.${i % 250}`,
        'Mozilla/5.0 (scale bench)',
        `{"email":"user-${user % COUNTS.users}@scale.example"}`,
        NOW - 365 * DAY + Math.floor((i / COUNTS.audit) * 365 * DAY),
      ];
    },
  },
  accounts: {
    columns: ['id', 'user_id', 'provider', 'provider_account_id', 'provider_login', 'access_token_enc', 'scope', 'created_at', 'updated_at'],
    types: ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'bigint', 'bigint'],
    row: (i) => [
      rowId(2, i),
      userId(i * 10),
      'github',
      String(1_000_000 + i),
      `gh-user-${i}`,
      `v1.${randomBytes(12).toString('base64url')}.sealed`,
      'read:user,user:email',
      NOW - 100 * DAY,
      NOW - 100 * DAY,
    ],
  },
};

/** The known users (their ids after the seeded ones') and a valid session token for each, made as the server makes them. */
function knownRows(hash) {
  const codec = createSessionTokenCodec(JWT_SECRET);
  const issuedAt = new Date(Math.floor(NOW / 1000) * 1000);
  const expiresAt = new Date(issuedAt.getTime() + 7 * DAY);
  const users = [];
  const sessions = [];
  const cookies = [];
  for (let k = 0; k < KNOWN; k++) {
    const id = userId(COUNTS.users + k);
    users.push([id, knownEmail(k), hash, 1, '{}', NOW - DAY, null, 0]);
    const sessionId = rowId(3, k);
    const token = codec.sign({ userId: id, sessionId, issuedAt, expiresAt });
    sessions.push([
      sessionId,
      id,
      createHash('sha256').update(token).digest('hex'),
      expiresAt.getTime(),
      issuedAt.getTime(),
      '127.0.0.1',
      'scale bench',
      NOW,
      'password',
    ]);
    cookies.push(`gatehouse_session=${token}`);
  }
  return { users, sessions, cookies, ids: users.map((row) => row[0]) };
}

// --- seeders: one insert of a batch of rows per dialect ---------------------------------------

function sqliteSeeder(file) {
  const db = new Database(file);
  db.pragma('busy_timeout = 30000');
  const statements = new Map();
  return {
    async insert(table, rows) {
      const { columns } = TABLES[table];
      let statement = statements.get(table);
      if (!statement) {
        statement = db.prepare(`insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
        statements.set(table, statement);
      }
      db.transaction(() => {
        for (const row of rows) statement.run(row);
      })();
    },
    async analyze() {},
    async close() {
      db.close();
    },
  };
}

async function postgresSeeder(connectionString) {
  const client = new pg.Client({ connectionString });
  await client.connect();
  return {
    // One statement per batch: unnest of one array per column, in a transaction of its own.
    async insert(table, rows) {
      const { columns, types } = TABLES[table];
      const arrays = columns.map((_, c) => rows.map((row) => row[c]));
      const unnest = types.map((type, c) => `$${c + 1}::${type}[]`).join(', ');
      await client.query('begin');
      await client.query(`insert into ${table} (${columns.join(', ')}) select * from unnest(${unnest})`, arrays);
      await client.query('commit');
    },
    // What autovacuum would do within a minute of such a load: the planner's statistics.
    async analyze() {
      await client.query('analyze');
    },
    async close() {
      await client.end();
    },
  };
}

async function seedTable(seeder, table, count, ctx) {
  const started = performance.now();
  for (let from = 0; from < count; from += BATCH) {
    const rows = [];
    for (let i = from; i < Math.min(count, from + BATCH); i++) rows.push(TABLES[table].row(i, ctx));
    await seeder.insert(table, rows);
    if ((from / BATCH) % 50 === 49) console.error(`  ${table}: ${from + BATCH} of ${count}`);
  }
  return (performance.now() - started) / 1000;
}

// --- measures ----------------------------------------------------------------------------------

function load(spec) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bench', 'load.mjs'), JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => {
      const line = out.trim().split('\n').pop();
      if (code !== 0 || !line) reject(new Error(`load.mjs failed (${code})`));
      else resolve(JSON.parse(line));
    });
  });
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

async function adminGet(url, pathname) {
  const started = performance.now();
  const response = await fetch(url + pathname, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`${pathname} answered ${response.status}`);
  return performance.now() - started;
}

/** p50 and p99 of SEARCHES sequential requests (after 5 uncounted), each path from `pathOf(i)`. */
async function latencies(url, pathOf) {
  for (let i = 0; i < 5; i++) await adminGet(url, pathOf(i));
  const times = [];
  for (let i = 0; i < SEARCHES; i++) times.push(await adminGet(url, pathOf(i)));
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

async function sessionRate(url, cookie) {
  const spec = { url, path: '/api/auth/session', headers: { cookie }, connections: 32 };
  await load({ ...spec, duration: 2 });
  const result = await load({ ...spec, duration: SECONDS });
  if (!result.statuses['2xx']) throw new Error(`the session check answered ${JSON.stringify(result.statuses)}`);
  return { rps: result.statuses['2xx'] / SECONDS, p99: result.p99 };
}

/** Two-letter terms in no seeded email: the worst case of a term too short for a trigram index. */
const SHORT_ABSENT = ['zq', 'jv', 'qy', 'fz', 'yj'];

/**
 * The admin searches: users by a substring of their email (a rare term, one every user has, a
 * 2-letter term no one has), audit rows by user, and by type within a week.
 */
async function searches(url, userIds) {
  const users = await latencies(url, (i) => `/api/admin/users?query=${encodeURIComponent(`ser-${(i * 7919) % 100_000}`)}`);
  const usersCommon = await latencies(url, (i) => `/api/admin/users?query=${['scale', 'user-', '@scale.', 'example'][i % 4]}`);
  const usersShort = await latencies(url, (i) => `/api/admin/users?query=${SHORT_ABSENT[i % SHORT_ABSENT.length]}`);
  const byUser = await latencies(url, (i) => `/api/admin/audit?userId=${userIds[i % userIds.length]}`);
  const byType = await latencies(url, (i) => {
    const until = NOW - (i % 300) * DAY;
    return `/api/admin/audit?type=login_failure&since=${new Date(until - 7 * DAY).toISOString()}&until=${new Date(until).toISOString()}`;
  });
  return { users, usersCommon, usersShort, byUser, byType };
}

/**
 * The sweep, in this process through the built library against the same database (the server
 * sweeps only at start and hourly), while autocannon checks a session on the server: the load
 * lasts long enough to cover the sweep (estimated from the expired rows), its p99 is the figure.
 */
async function sweepUnderLoad(url, cookie, databaseEnv, expired) {
  const gatehouse = await createGatehouse(loadConfig({ ...env(), ...databaseEnv }));
  try {
    const duration = Math.ceil(4 + expired / 50_000);
    const checks = load({ url, path: '/api/auth/session', headers: { cookie }, connections: 8, duration });
    await sleep(1000);
    const started = performance.now();
    const report = await gatehouse.sweep();
    const seconds = (performance.now() - started) / 1000;
    const result = await checks;
    return {
      seconds,
      deleted: report.sessions ?? 0,
      p99: result.p99,
      coveredSweep: seconds + 1 <= duration,
      non2xx: result.requests - (result.statuses['2xx'] ?? 0),
    };
  } finally {
    await gatehouse.close();
  }
}

/** The users in the database, read directly: what a complete export has, one line each. */
async function countUsers(databaseUrl) {
  if (databaseUrl.startsWith('sqlite:')) {
    const database = new Database(databaseUrl.slice('sqlite:'.length), { readonly: true });
    try {
      return database.prepare('select count(*) from users').pluck().get();
    } finally {
      database.close();
    }
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return Number((await client.query('select count(*) as n from users')).rows[0].n);
  } finally {
    await client.end();
  }
}

/** The export of every user on a server of its own (VmHWM is a lifetime peak): its bytes, time and the server's peak RSS. */
async function exportPeak(serverEnv) {
  const users = await countUsers(serverEnv.DATABASE_URL);
  const server = await startServer(serverEnv);
  try {
    const started = performance.now();
    const response = await fetch(`${server.url}/api/admin/users/export`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    if (response.status !== 200) throw new Error(`the export answered ${response.status}`);
    let bytes = 0;
    let lines = 0;
    for await (const chunk of response.body) {
      bytes += chunk.length;
      for (const byte of chunk) if (byte === 10) lines++;
    }
    return { seconds: (performance.now() - started) / 1000, bytes, lines, users, peakMB: procStatusMB(server.child.pid, 'VmHWM') };
  } finally {
    await stop(server);
  }
}

async function stop(server) {
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.once('exit', resolve));
}

async function login(url, email) {
  const response = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  const body = await response.json().catch(() => null);
  return response.status === 200 ? '200' : `${response.status} ${body?.error ?? ''}`.trim();
}

/**
 * Sign-ins with the right password (spread over the known users) and sign-ups of new addresses,
 * 16 connections each: both are bound by bcrypt, so what a big database adds (the unique email's
 * index, the user search's index kept on each sign-up, the session and audit inserts) shows as
 * a lower rate. Then the timing parity as the main bench measures it: a wrong password for a
 * known address against an unknown address, in pairs of random order, the ratio of the medians.
 */
async function loginMeasures(url, phase) {
  const json = { 'content-type': 'application/json' };
  const logins = await load({
    url,
    method: 'POST',
    path: '/api/auth/login',
    body: { password: PASSWORD },
    emails: Array.from({ length: KNOWN }, (_, k) => knownEmail(k)),
    headers: json,
    connections: 16,
    duration: SECONDS,
  });
  const registers = await load({
    url,
    method: 'POST',
    path: '/api/auth/register',
    body: { password: PASSWORD },
    uniqueEmail: true,
    headers: json,
    connections: 16,
    duration: SECONDS,
  });
  const timed = async (email) => {
    const started = performance.now();
    const response = await fetch(`${url}/api/auth/login`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email, password: 'Wrong-Scale-Password-1' }),
    });
    await response.arrayBuffer();
    if (response.status !== 401) throw new Error(`a wrong password answered ${response.status}`);
    return performance.now() - started;
  };
  const known = [];
  const unknown = [];
  for (let i = -PARITY_WARM_UP; i < PARITY_PAIRS; i++) {
    const knownFirst = Math.random() < 0.5;
    for (const isKnown of knownFirst ? [true, false] : [false, true]) {
      const ms = await timed(isKnown ? knownEmail(1) : `nobody-${phase}-${i}@scale.bench`);
      if (i >= 0) (isKnown ? known : unknown).push(ms);
    }
  }
  const failures = (result) => result.requests - (result.statuses['2xx'] ?? 0);
  return {
    loginRps: (logins.statuses['2xx'] ?? 0) / SECONDS,
    registerRps: (registers.statuses['2xx'] ?? 0) / SECONDS,
    notOk: failures(logins) + failures(registers),
    parity: percentile(known, 50) / percentile(unknown, 50),
  };
}

// --- one dialect -------------------------------------------------------------------------------

async function measurePhase(label, phase, server, known, databaseEnv, expired) {
  const figures = {};
  if (measuring('session')) {
    console.error(`[${label}] ${phase}: session checks`);
    figures.session = await sessionRate(server.url, known.cookies[0]);
  }
  if (measuring('search')) {
    console.error(`[${label}] ${phase}: admin searches`);
    Object.assign(figures, await searches(server.url, [...known.ids, userId(4242 % COUNTS.users), userId(77 % COUNTS.users)]));
  }
  if (measuring('sweep')) {
    console.error(`[${label}] ${phase}: the sweep under session checks`);
    figures.sweep = await sweepUnderLoad(server.url, known.cookies[1], databaseEnv, expired);
  }
  if (measuring('login')) {
    console.error(`[${label}] ${phase}: sign-ins, sign-ups and their timing parity`);
    figures.login = await loginMeasures(server.url, phase);
  }
  return figures;
}

/**
 * The timed migration, and every one after it (the migrator refuses a gap), undone newest first with
 * their own `down` and forgotten by the migrator, so that `gatehouse migrate` applies them again.
 */
async function undoTimedMigration(databaseEnv) {
  const { openDatabase } = await import(pathToFileURL(path.join(root, 'dist/db/connect.js')).href);
  const { migrations } = await import(pathToFileURL(path.join(root, 'dist/db/migrations/index.js')).href);
  const undone = Object.keys(migrations)
    .sort()
    .filter((name) => name >= TIMED_MIGRATION)
    .reverse();
  const database = openDatabase(loadConfig({ ...env(), ...databaseEnv }).database, { queryTimeoutMs: 3_600_000 });
  try {
    for (const name of undone) {
      await migrations[name].down(database.kysely);
      await database.kysely.deleteFrom('kysely_migration').where('name', '=', name).execute();
    }
  } finally {
    await database.close();
  }
  if (undone.length > 1) console.error(`the migration measure times ${undone.reverse().join(' and ')}, applied together`);
}

/**
 * `gatehouse migrate` on the seeded database, as an operator runs a long one (DATABASE_QUERY_TIMEOUT=1h),
 * while the server serves. On PostgreSQL a write to the migration's table (a sign-in's last_login_at,
 * or an audit row) is made every 100 ms meanwhile, and the longest wait is reported; SQLite's migration is one write transaction,
 * so there every write waits for all of it.
 */
async function timeMigration(serverEnv, knownId) {
  const probe = serverEnv.DATABASE_URL.startsWith('postgres') ? await writeProbe(serverEnv.DATABASE_URL, knownId) : null;
  const started = performance.now();
  const output = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'migrate'], {
      env: { ...process.env, ...serverEnv, DATABASE_QUERY_TIMEOUT: '1h' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`gatehouse migrate failed (${code}): ${out}`))));
  });
  const seconds = (performance.now() - started) / 1000;
  if (!output.includes(`applied: ${TIMED_MIGRATION}`)) throw new Error(`gatehouse migrate did not apply ${TIMED_MIGRATION}: ${output}`);
  return { seconds, longestWriteSeconds: probe ? await probe.stop() : null };
}

async function writeProbe(connectionString, id) {
  const client = new pg.Client({ connectionString });
  await client.connect();
  let longest = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await TIMED.write(client, id);
      longest = Math.max(longest, (performance.now() - started) / 1000);
      await sleep(100);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await client.end();
      return longest;
    },
  };
}

async function runDialect(label, databaseEnv, openSeeder, hash) {
  const serverEnv = { ...env(), ...databaseEnv };
  // Started on the empty database: it migrates, and runs through the seeding, so that its start
  // sweep (the server sweeps at start) cannot take the expired sessions before the measured one.
  const server = await startServer(serverEnv);
  const figures = { label, seconds: {} };
  try {
    const known = knownRows(hash);
    const seeder = await openSeeder();
    try {
      await seeder.insert('users', known.users);
      await seeder.insert('sessions', known.sessions);
      figures.empty = await measurePhase(label, 'empty', server, known, databaseEnv, 0);
      if (measuring('export')) figures.empty.export = await exportPeak(serverEnv);
      if (measuring('migration')) await undoTimedMigration(databaseEnv);
      for (const [table, count] of [
        ['users', COUNTS.users],
        ['sessions', COUNTS.sessions],
        ['audit_events', COUNTS.audit],
        ['accounts', COUNTS.accounts],
      ]) {
        console.error(`[${label}] seeding ${count} ${table}`);
        figures.seconds[table] = await seedTable(seeder, table, count, { hash });
      }
      await seeder.analyze();
    } finally {
      await seeder.close();
    }
    if (measuring('migration')) {
      console.error(`[${label}] seeded: gatehouse migrate (${TIMED_MIGRATION})`);
      figures.migration = await timeMigration(serverEnv, known.ids[3]);
    }
    // SQLite's seeding held this event loop: let it see the keep-alive connections the server
    // closed meanwhile, or the next fetch may take one and fail ("other side closed").
    await sleep(200);
    figures.loginStatus = await login(server.url, knownEmail(2));
    figures.seeded = await measurePhase(label, 'seeded', server, known, databaseEnv, COUNTS.sessions / 2);
  } finally {
    await stop(server);
  }
  if (measuring('export')) {
    console.error(`[${label}] seeded: export`);
    figures.seeded.export = await exportPeak(serverEnv);
  }
  return figures;
}

// --- the run -----------------------------------------------------------------------------------

console.error(`Gatehouse at scale — ${os.availableParallelism()} cores, Node ${process.version}, counts ${JSON.stringify(COUNTS)}`);
// One real bcrypt hash (cost 10), copied onto every user: hashing a million would measure bcrypt.
// Gatehouse bcrypts the SHA-384 of the normalised password (src/credentials/hasher.ts prehash).
const hash = await bcrypt.hash(createHash('sha384').update(normalizePassword(PASSWORD), 'utf8').digest('base64'), 10);
const results = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-scale-'));
try {
  const file = path.join(dir, 'scale.db');
  results.push(await runDialect('SQLite', { DATABASE_URL: `sqlite:${file}` }, async () => sqliteSeeder(file), hash));
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}

const pgUrl = process.env.DATABASE_URL?.startsWith('postgres') ? process.env.DATABASE_URL : 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const pgTarget = new URL(pgUrl);
if (await answers(pgTarget.hostname, Number(pgTarget.port || 5432))) {
  const schema = `gatehouse_scale_${Date.now()}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const schemaUrl = new URL(pgUrl);
  schemaUrl.searchParams.set('options', `-c search_path=${schema}`);
  const redisTarget = new URL(redisUrl);
  const redis = (await answers(redisTarget.hostname, Number(redisTarget.port || 6379))) ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: schema } : {};
  try {
    const label = redis.REDIS_URL ? 'PostgreSQL + Redis' : 'PostgreSQL';
    results.push(await runDialect(label, { DATABASE_URL: schemaUrl.toString(), ...redis }, () => postgresSeeder(schemaUrl.toString()), hash));
  } finally {
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
  }
} else {
  console.error(`PostgreSQL does not answer at ${pgTarget.host}: measuring SQLite only.`);
}

printTable(results);

// --- the table ---------------------------------------------------------------------------------

function printTable(runs) {
  const ms = (value) => `${value.toFixed(1)} ms`;
  const verdict = (met) => (met ? 'met' : '**NOT MET**');
  const rows = [
    {
      key: 'session',
      name: 'session check (GET /api/auth/session, 32 connections)',
      show: (p) => `${p.session.rps.toFixed(0)}/s`,
      compare: (e, s) => `${(s.session.rps / e.session.rps).toFixed(2)}×`,
      target: '≥ 0.90 × empty',
      met: (e, s) => s.session.rps >= 0.9 * e.session.rps,
    },
    ...[
      ['admin user search by substring (query=ser-…)', 'users', 50],
      ['admin user search, a term every user has (query=scale, user-, …)', 'usersCommon', 50],
      ['admin user search, a 2-letter term no user has (query=zq, jv, …)', 'usersShort', 50],
      ['admin audit search by user', 'byUser', 20],
      ['admin audit search by type + one week', 'byType', 20],
    ].map(([name, key, limit]) => ({
      key,
      name: `${name}, ${SEARCHES} sequential`,
      show: (p) => `p50 ${ms(p[key].p50)} p99 ${ms(p[key].p99)}`,
      compare: (e, s) => `p99 ${ms(s[key].p99)}`,
      target: `p99 ≤ ${limit} ms`,
      met: (e, s) => s[key].p99 <= limit,
    })),
    {
      key: 'sweep',
      name: 'session check p99 during the sweep (8 connections)',
      show: (p) =>
        `p99 ${p.sweep.p99} ms; sweep ${p.sweep.seconds.toFixed(2)} s, ${p.sweep.deleted} deleted${p.sweep.coveredSweep ? '' : ' (sweep outlasted the load)'}${p.sweep.non2xx ? `, ${p.sweep.non2xx} not 2xx` : ''}`,
      compare: (e, s) => `p99 ${s.sweep.p99} ms`,
      target: 'p99 ≤ 10 ms',
      met: (e, s) => s.sweep.p99 <= 10 && s.sweep.non2xx === 0,
    },
    {
      key: 'export',
      name: 'export of all users: server peak RSS (VmHWM)',
      show: (p) => `${p.export.peakMB.toFixed(1)} MB (${p.export.lines} lines in ${p.export.seconds.toFixed(2)} s)`,
      compare: (e, s) => `${s.export.peakMB.toFixed(1)} MB`,
      target: '≤ 200 MB',
      // One line for every user: the seeded, the known, and those the sign-up measures made.
      met: (e, s) => s.export.peakMB <= 200 && s.export.lines === s.export.users && s.export.users >= COUNTS.users + KNOWN,
    },
    {
      key: 'login',
      name: 'sign-in (right password, 16 connections)',
      show: (p) => `${p.login.loginRps.toFixed(1)}/s`,
      compare: (e, s) => `${(s.login.loginRps / e.login.loginRps).toFixed(2)}×`,
      target: '≥ 0.90 × empty',
      met: (e, s) => s.login.loginRps >= 0.9 * e.login.loginRps && s.login.notOk === 0,
    },
    {
      key: 'login',
      name: 'sign-up (new addresses, 16 connections)',
      show: (p) => `${p.login.registerRps.toFixed(1)}/s`,
      compare: (e, s) => `${(s.login.registerRps / e.login.registerRps).toFixed(2)}×`,
      target: '≥ 0.90 × empty',
      met: (e, s) => s.login.registerRps >= 0.9 * e.login.registerRps && s.login.notOk === 0,
    },
    {
      key: 'login',
      name: `wrong password: known / unknown address, median of ${PARITY_PAIRS} pairs`,
      show: (p) => p.login.parity.toFixed(3),
      compare: (e, s) => s.login.parity.toFixed(3),
      target: '0.9–1.1',
      met: (e, s) => e.login.parity >= 0.9 && e.login.parity <= 1.1 && s.login.parity >= 0.9 && s.login.parity <= 1.1,
    },
  ];
  console.log(`\nGatehouse at scale — ${os.availableParallelism()} cores, Node ${process.version}, ${new Date().toISOString()}\n`);
  console.log('| database | measure | empty | seeded | seeded ratio or p99 | target | verdict |');
  console.log('|---|---|---|---|---|---|---|');
  for (const run of runs) {
    for (const row of rows.filter(({ key }) => run.empty[key] !== undefined && run.seeded[key] !== undefined)) {
      console.log(
        `| ${run.label} | ${row.name} | ${row.show(run.empty)} | ${row.show(run.seeded)} | ${row.compare(run.empty, run.seeded)} | ${row.target} | ${verdict(row.met(run.empty, run.seeded))} |`,
      );
    }
  }
  console.log(
    `\nFactor ${FACTOR} (${COUNTS.users} users, ${COUNTS.sessions} sessions of which half expired, ${COUNTS.accounts} provider links), audit factor ${AUDIT_FACTOR} (${COUNTS.audit} audit rows over 365 days); ${KNOWN} known users more.`,
  );
  for (const run of runs) {
    const seconds = Object.entries(run.seconds).map(
      ([table, s]) => `${table} ${s.toFixed(1)} s (${Math.round(COUNTS[table === 'audit_events' ? 'audit' : table] / s)}/s)`,
    );
    console.log(`${run.label} seeding: ${seconds.join(', ')}; a seeded user's login answered ${run.loginStatus}.`);
    if (run.migration) {
      const { seconds: took, longestWriteSeconds } = run.migration;
      const writes =
        longestWriteSeconds === null
          ? 'one write transaction: writes wait for all of it'
          : `the longest wait of a write to ${TIMED.table} meanwhile: ${longestWriteSeconds.toFixed(2)} s`;
      console.log(`${run.label}: gatehouse migrate (${TIMED_MIGRATION}) on the seeded database took ${took.toFixed(1)} s; ${writes}.`);
    }
  }
}
