// The performance guard of DESIGN §10 for one change: session checks of this build against
// another build of Gatehouse (the commit before the change), on SQLite, on the same machine in
// the same minutes. Rounds alternate between the two servers so a drifting machine weighs on both
// alike; prints each round, the medians and the ratio.
//
//   git worktree add /tmp/base <commit> && (cd /tmp/base && npm ci && npm run build)
//   npm run build && node bench/session-ab.mjs /tmp/base
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { CLI, mainThreadCpu, root, startServer } from './lib.mjs';

const baseline = process.argv[2];
const ROUNDS = Number(process.env.AB_ROUNDS ?? 4);
const SECONDS = Number(process.env.AB_SECONDS ?? 5);
if (!baseline || !fs.existsSync(path.join(baseline, 'dist', 'cli.js'))) {
  console.error('usage: node bench/session-ab.mjs <another checkout, built>');
  process.exit(2);
}

function load(spec) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bench', 'load.mjs'), JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(`load failed (${code})`))));
  });
}

async function sessionChecks(cli, dir) {
  const env = {
    JWT_SECRET: 'bench-secret-0123456789-0123456789-0123456789',
    BCRYPT_ROUNDS: '4',
    MAIL_DELIVERY: 'worker',
    DATABASE_URL: `sqlite:${path.join(dir, `ab-${Date.now()}.db`)}`,
  };
  const server = await startServer(env, { cli });
  try {
    const registered = await fetch(`${server.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ab@bench.example', password: 'Bench-Password-1' }),
    });
    const cookie = registered.headers.getSetCookie()[0].split(';')[0];
    const spec = { url: server.url, path: '/api/auth/session', headers: { cookie }, connections: 32 };
    await load({ ...spec, duration: 2 });
    const before = mainThreadCpu(server.child.pid);
    const result = await load({ ...spec, duration: SECONDS });
    const after = mainThreadCpu(server.child.pid);
    return {
      rps: result.statuses['2xx'] / SECONDS,
      p99: result.p99,
      userMicros: before && after ? (1e6 * (after.user - before.user)) / result.requests : NaN,
    };
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-ab-'));
const results = { before: [], after: [] };
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [label, cli] of [
      ['before', path.join(baseline, 'dist', 'cli.js')],
      ['after', CLI],
    ]) {
      const figures = await sessionChecks(cli, dir);
      results[label].push(figures);
      console.log(`round ${round} ${label.padEnd(6)} ${figures.rps.toFixed(0)}/s  p99 ${figures.p99} ms  ${figures.userMicros.toFixed(0)} µs user`);
    }
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const before = median(results.before.map((r) => r.rps));
const after = median(results.after.map((r) => r.rps));
console.log(
  `session checks, median of ${ROUNDS}: before ${before.toFixed(0)}/s, after ${after.toFixed(0)}/s = ${(after / before).toFixed(3)}× (guard: ≥ 0.90×)`,
);
