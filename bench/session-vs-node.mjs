// The session check against the machine's ceiling: plain node:http answering the very bytes the
// session check answers (the same status, headers and body, captured from Gatehouse first), loaded
// the same way (bench/load.mjs, 32 connections), in alternating rounds so a drifting machine
// weighs on both alike — on SQLite, and on PostgreSQL + Redis when they answer. Prints each round,
// the medians and the ratio (the target: the session check at ≥ 0.6 × plain node:http). The same
// for the refusals: the 400 of a login body that is not valid, the 401 of a malformed cookie, and
// the 429 of a login over its rate limit (a POST with a JSON body). Each Gatehouse round also prints the server's main-thread CPU per
// answer (user + kernel), to read beside bench/ceiling.mjs.
//
//   npm run build && node bench/session-vs-node.mjs [--rounds 3] [--seconds 5] [--build <another checkout, built>]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { CLI, answers, mainThreadCpu, registeredCookie, runJson, startServer } from './lib.mjs';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '5' }, build: { type: 'string' } } });
const ROUNDS = Number(values.rounds);
const SECONDS = Number(values.seconds);
const cli = values.build === undefined ? CLI : path.join(values.build, 'dist', 'cli.js');
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const run = (spec) => runJson('load.mjs', [JSON.stringify({ ...spec, duration: SECONDS })]);

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
async function capture(url, { method = 'GET', headers, body }) {
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const kept = {};
  for (const [name, value] of response.headers) if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) kept[name] = value;
  return { status: response.status, headers: kept, body: await response.text() };
}

async function compare(label, env) {
  const server = await startServer(env, { cli });
  try {
    const email = `vs-node-${Date.now()}@bench.example`;
    const cookie = await registeredCookie(server.url, email, 'Correct-Horse-9-Versus');
    const login = {
      method: 'POST',
      path: '/api/auth/login',
      headers: { 'content-type': 'application/json' },
      body: { email: 'flood@bench.example', password: 'Wrong-Bench-Password-1' },
    };
    // The server's login allowance is one an hour (RATE_LIMIT_LOGIN below): spent here, so that
    // the answer captured, and every one after, is the 429.
    await capture(`${server.url}/api/auth/login`, login);
    for (const [name, status, request] of [
      ['session check (200)', 200, { path: '/api/auth/session', headers: { cookie } }],
      ['refusal 400 (a login body that is not valid)', 400, { ...login, body: { email: 'not-an-email' } }],
      ['refusal 401 (malformed cookie)', 401, { path: '/api/auth/session', headers: { cookie: 'gatehouse_session=not.a.jwt' } }],
      ['refusal 429 (login over its rate limit)', 429, login],
    ]) {
      const answer = await capture(`${server.url}${request.path}`, request);
      if (answer.status !== status) throw new Error(`${name}: Gatehouse answered ${answer.status}, not ${status}`);
      const plain = await plainServer(answer.status, answer.headers, answer.body);
      try {
        const gatehouseSpec = { ...request, url: server.url, connections: 32 };
        const plainSpec = { ...request, url: plain.url, connections: 32 };
        await runJson('load.mjs', [JSON.stringify({ ...gatehouseSpec, duration: 2 })]);
        await runJson('load.mjs', [JSON.stringify({ ...plainSpec, duration: 2 })]);
        const gatehouse = [];
        const node = [];
        const cpu = [];
        for (let round = 1; round <= ROUNDS; round++) {
          node.push((await run(plainSpec)).rps);
          const before = mainThreadCpu(server.child.pid);
          const result = await run(gatehouseSpec);
          const after = mainThreadCpu(server.child.pid);
          if (result.statuses[`${String(answer.status)[0]}xx`] !== result.requests)
            console.error(`[${label}] ${name}: not every answer was a ${answer.status}`);
          gatehouse.push(result.rps);
          if (before && after) cpu.push((1e6 * (after.user - before.user + after.kernel - before.kernel)) / result.requests);
          console.error(`[${label}] ${name} round ${round}: node:http ${Math.round(node.at(-1))}/s, Gatehouse ${Math.round(gatehouse.at(-1))}/s`);
        }
        const ratio = median(gatehouse) / median(node);
        const perAnswer = cpu.length > 0 ? `, main-thread CPU ${median(cpu).toFixed(0)} µs an answer` : '';
        console.log(
          `${label} | ${name} | Gatehouse ${Math.round(median(gatehouse))}/s${perAnswer} | plain node:http, the same ${answer.body.length}-byte body and ${Object.keys(answer.headers).length} headers, ${Math.round(median(node))}/s | ${ratio.toFixed(2)}×`,
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
const common = { JWT_SECRET: 'bench-secret-0123456789-0123456789-0123456789', BCRYPT_ROUNDS: '4', MAIL_DELIVERY: 'worker', RATE_LIMIT_LOGIN: '1/1h' };
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
