// The session check against the machine's ceiling: plain node:http answering the very bytes the
// session check answers (the same status, headers and body, captured from Gatehouse first), loaded
// the same way (bench/load.mjs, 32 connections), in alternating rounds so a drifting machine
// weighs on both alike — on SQLite, and on PostgreSQL + Redis when they answer. Prints each round,
// the medians and the ratio (the target: the session check at ≥ 0.6 × plain node:http). The same
// for a refusal, the 401 of a malformed cookie.
//
//   npm run build && node bench/session-vs-node.mjs [--rounds 3] [--seconds 5] [--build <another checkout, built>]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { CLI, answers, runJson, startServer } from './lib.mjs';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '5' }, build: { type: 'string' } } });
const ROUNDS = Number(values.rounds);
const SECONDS = Number(values.seconds);
const cli = values.build === undefined ? CLI : path.join(values.build, 'dist', 'cli.js');
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const rps = async (spec) => (await runJson('load.mjs', [JSON.stringify({ ...spec, duration: SECONDS })])).rps;

/** A plain node:http server answering `status`, `headers` and `body` to every request. */
async function plainServer(status, headers, body) {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const [status, headers, body] = ${JSON.stringify([status, headers, body])};
       require('node:http').createServer((q, s) => { s.writeHead(status, headers); s.end(body); }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise((resolve) => child.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim()))));
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

/** The answer's status, headers (but Node's own) and body, as a client gets them. */
async function capture(url, headers) {
  const response = await fetch(url, { headers });
  const kept = {};
  for (const [name, value] of response.headers) if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) kept[name] = value;
  return { status: response.status, headers: kept, body: await response.text() };
}

async function compare(label, env) {
  const server = await startServer(env, { cli });
  try {
    const email = `vs-node-${Date.now()}@bench.example`;
    const registered = await fetch(`${server.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'Correct-Horse-9-Versus' }),
    });
    const cookie = registered.headers
      .getSetCookie()
      .map((header) => header.split(';')[0])
      .join('; ');
    for (const [name, headers] of [
      ['session check (200)', { cookie }],
      ['refusal 401 (malformed cookie)', { cookie: 'gatehouse_session=not.a.jwt' }],
    ]) {
      const answer = await capture(`${server.url}/api/auth/session`, headers);
      const plain = await plainServer(answer.status, answer.headers, answer.body);
      try {
        const gatehouseSpec = { url: server.url, path: '/api/auth/session', headers, connections: 32 };
        const plainSpec = { url: plain.url, path: '/api/auth/session', headers, connections: 32 };
        await runJson('load.mjs', [JSON.stringify({ ...gatehouseSpec, duration: 2 })]);
        await runJson('load.mjs', [JSON.stringify({ ...plainSpec, duration: 2 })]);
        const gatehouse = [];
        const node = [];
        for (let round = 1; round <= ROUNDS; round++) {
          node.push(await rps(plainSpec));
          gatehouse.push(await rps(gatehouseSpec));
          console.error(`[${label}] ${name} round ${round}: node:http ${Math.round(node.at(-1))}/s, Gatehouse ${Math.round(gatehouse.at(-1))}/s`);
        }
        const ratio = median(gatehouse) / median(node);
        console.log(
          `${label} | ${name} | Gatehouse ${Math.round(median(gatehouse))}/s | plain node:http, the same ${answer.body.length}-byte body and ${Object.keys(answer.headers).length} headers, ${Math.round(median(node))}/s | ${ratio.toFixed(2)}×`,
        );
      } finally {
        plain.stop();
      }
    }
  } finally {
    server.child.kill('SIGINT');
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-vs-node-'));
const common = { JWT_SECRET: 'bench-secret-0123456789-0123456789-0123456789', BCRYPT_ROUNDS: '4', MAIL_DELIVERY: 'worker' };
console.error(`session check against plain node:http — ${os.availableParallelism()} cores, Node ${process.version}, ${ROUNDS} rounds of ${SECONDS} s`);
await compare('SQLite', { ...common, DATABASE_URL: `sqlite:${path.join(dir, 'vs-node.db')}` });
const pgUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const pgTarget = new URL(pgUrl);
const redisTarget = new URL(redisUrl);
if ((await answers(pgTarget.hostname, Number(pgTarget.port || 5432))) && (await answers(redisTarget.hostname, Number(redisTarget.port || 6379)))) {
  const name = `gatehouse_vs_node_${Date.now()}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  try {
    await compare('PostgreSQL + Redis', { ...common, DATABASE_URL: url.toString(), REDIS_URL: redisUrl, REDIS_KEY_PREFIX: name });
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
} else {
  console.error('PostgreSQL or Redis does not answer: SQLite only.');
}
fs.rmSync(dir, { recursive: true, force: true });
