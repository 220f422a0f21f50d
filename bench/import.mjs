// npm run bench:import: `gatehouse users import` of a 100,000-line NDJSON file of bcrypt-hashed
// users on SQLite (targets: at least 5,000 lines/s, since the import stores the hashes as given and
// never hashes again, and a peak RSS of at most 200 MB, since the file is streamed), then login
// timing parity for imported accounts: a wrong password for a bcrypt-imported and for an
// argon2id-imported account against an unknown email (target 0.9–1.1 each: an imported account's
// login is no oracle). The last line of stdout is the figures as JSON.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hash as argon2Hash } from '@node-rs/argon2';
import bcrypt from 'bcrypt';
import { CLI, procStatusMB, startServer } from './lib.mjs';

const LINES = Number(process.env.BENCH_IMPORT_LINES ?? 100_000);
const PASSWORD = 'Imported-Bench-Password-1';
const BCRYPT_EMAIL = 'parity-bcrypt@import.bench';
const ARGON2_EMAIL = 'parity-argon2id@import.bench';
const CHECK_EMAIL = 'signs-in@import.bench';

if (!fs.existsSync(CLI)) {
  console.error('dist/cli.js is missing: run npm run build first.');
  process.exit(1);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-import-'));
const env = {
  PATH: process.env.PATH,
  ENV_FILE: '/dev/null',
  DATABASE_URL: `sqlite:${path.join(dir, 'gatehouse.db')}`,
  JWT_SECRET: 'bench-secret-0123456789-0123456789-0123456789',
  BCRYPT_ROUNDS: '10',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_LOGIN: '999999999/1s',
  LOCKOUT_MAX_FAILURES: '1000',
};

/** Runs the built CLI as an operator would (`npx gatehouse …`), sampling its peak RSS (VmHWM) until it exits. */
function cli(args) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    let peakMB = 0;
    const sample = setInterval(() => {
      try {
        peakMB = Math.max(peakMB, procStatusMB(child.pid, 'VmHWM'));
      } catch {
        // The process has just exited: the last sample stands.
      }
    }, 20);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearInterval(sample);
      resolve({ code, stdout, stderr, seconds: (performance.now() - started) / 1000, peakMB });
    });
  });
}

/** The file: one real bcrypt hash copied onto every line (the import must not hash; computing 100,000 would measure bcrypt). */
async function writeImportFile(file) {
  const bcryptHash = await bcrypt.hash(PASSWORD, 10);
  // @node-rs/argon2's defaults (m=19456 KiB, t=2, p=1): OWASP's minimum, what an argon2 user base typically has.
  const argon2idHash = await argon2Hash(PASSWORD);
  const out = fs.createWriteStream(file);
  const write = (line) => (out.write(line + '\n') ? null : new Promise((resolve) => out.once('drain', resolve)));
  const createdAt = new Date(Date.UTC(2024, 0, 1)).toISOString();
  const fixed = [
    { email: BCRYPT_EMAIL, emailVerified: true, password: { algorithm: 'bcrypt', hash: bcryptHash } },
    { email: ARGON2_EMAIL, emailVerified: true, password: { algorithm: 'argon2id', hash: argon2idHash } },
    { email: CHECK_EMAIL, emailVerified: true, password: { algorithm: 'bcrypt', hash: bcryptHash } },
  ];
  for (const user of fixed) await write(JSON.stringify(user));
  for (let i = fixed.length; i < LINES; i++) {
    await write(
      JSON.stringify({
        email: `user-${i}@import.bench`,
        emailVerified: i % 3 !== 0,
        createdAt,
        externalId: `legacy-${i}`,
        password: { algorithm: 'bcrypt', hash: bcryptHash },
      }),
    );
  }
  await new Promise((resolve, reject) => out.end((error) => (error ? reject(error) : resolve())));
}

async function login(url, email, password) {
  const started = performance.now();
  const response = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * Unknown email against a wrong password for `email`, in pairs of random order after 20 pairs
 * that are not counted (a fresh server's first requests are slower), as npm run bench measures it.
 */
async function parity(url, email, pairs = 40) {
  const unknown = [];
  const known = [];
  for (let i = -20; i < pairs; i++) {
    const flip = Math.random() < 0.5;
    for (const which of flip ? ['unknown', 'known'] : ['known', 'unknown']) {
      const { status, ms } = which === 'unknown' ? await login(url, `nobody-${i}@import.bench`, 'Wrong-Pass-1') : await login(url, email, 'Wrong-Pass-1');
      if (status !== 401) throw new Error(`a wrong-password login answered ${status}`);
      if (i >= 0) (which === 'unknown' ? unknown : known).push(ms);
    }
  }
  return median(unknown) / median(known);
}

const fmt = (value, digits = 0) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

try {
  console.error(`gatehouse users import: ${fmt(LINES)} lines of bcrypt hashes on SQLite — ${os.cpus().length} cores, Node ${process.version}`);
  const file = path.join(dir, 'users.ndjson');
  await writeImportFile(file);
  const migrated = await cli(['migrate']);
  if (migrated.code !== 0) throw new Error(`gatehouse migrate failed:\n${migrated.stderr}`);

  const imported = await cli(['users', 'import', file]);
  if (imported.code !== 0) throw new Error(`gatehouse users import exited ${imported.code}:\n${imported.stdout}\n${imported.stderr}`);
  const figures = {
    lines: LINES,
    seconds: imported.seconds,
    linesPerSecond: LINES / imported.seconds,
    peakRssMB: imported.peakMB,
    summary: imported.stdout.trim(),
  };

  // A second run imports nothing twice (every line skipped), and shows what a no-op pass costs.
  const again = await cli(['users', 'import', file]);
  figures.rerunSeconds = again.seconds;
  console.error(`imported in ${fmt(figures.seconds, 1)} s: ${fmt(figures.linesPerSecond)} lines/s, peak RSS ${fmt(figures.peakRssMB, 1)} MB`);

  console.error('login timing parity (production mode, on the imported database)');
  const server = await startServer({ ...env, LOG_LEVEL: 'info', NODE_ENV: 'production', ALLOW_INSECURE_BASE_URL: 'true', METRICS_PUBLIC: 'true' });
  try {
    const check = await login(server.url, CHECK_EMAIL, PASSWORD);
    if (check.status !== 200) throw new Error(`an imported person could not sign in (${check.status})`);
    figures.parity = { bcrypt: await parity(server.url, BCRYPT_EMAIL), argon2id: await parity(server.url, ARGON2_EMAIL) };
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
  }

  const rows = [
    ['import rate (lines/s)', fmt(figures.linesPerSecond), '≥ 5,000', figures.linesPerSecond >= 5000],
    ['import peak RSS (MB)', fmt(figures.peakRssMB, 1), '≤ 200', figures.peakRssMB <= 200],
    [
      'login parity, bcrypt import: unknown / wrong password',
      fmt(figures.parity.bcrypt, 3),
      '0.9–1.1',
      figures.parity.bcrypt >= 0.9 && figures.parity.bcrypt <= 1.1,
    ],
    [
      'login parity, argon2id import: unknown / wrong password',
      fmt(figures.parity.argon2id, 3),
      '0.9–1.1',
      figures.parity.argon2id >= 0.9 && figures.parity.argon2id <= 1.1,
    ],
  ];
  console.error(
    `\nimported ${fmt(LINES)} lines in ${fmt(figures.seconds, 1)} s (${figures.summary.split('\n').pop()}); a second run: ${fmt(figures.rerunSeconds, 1)} s`,
  );
  for (const [name, value, target, ok] of rows) console.error(`${ok ? 'ok  ' : 'MISS'} ${name.padEnd(58)} ${value.padStart(9)}   target ${target}`);
  console.log(JSON.stringify(figures));
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
