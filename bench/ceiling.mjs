// What a handler may spend and still answer at a given share of plain node:http, on this machine.
// Plain node:http answers an answer of the session check's shape (a 368-byte JSON body, 10 headers) after
// burning a fixed number of microseconds of CPU on its event loop, for several budgets, each
// loaded as the session check is (bench/load.mjs, 32 connections, on the other core). Prints
// each budget's rate, its share of the rate at 0 µs, and the server's main-thread CPU per answer
// (user + kernel, from /proc): the budget left for the work itself once Node's HTTP and the
// socket write are paid, which is what the ratio targets of docs/performance.md come down to.
//
//   node bench/ceiling.mjs [--seconds 5] [--rounds 2] [--budgets 0,5,10,20,40,80]
import { spawn } from 'node:child_process';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { mainThreadCpu, runJson } from './lib.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    budgets: { type: 'string', default: '0,5,10,15,20,30,40,60,80' },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const BUDGETS = values.budgets.split(',').map(Number);
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];

const BODY = JSON.stringify({
  user: {
    id: '0b6c8f2e-3d1a-4c5b-9e7f-2a4d6c8e0f1a',
    email: 'someone@example.com',
    emailVerified: true,
    createdAt: '2026-11-27T00:00:00.000Z',
    lastLoginAt: '2026-11-27T00:00:00.000Z',
    preferences: {},
  },
  session: { expiresAt: '2026-12-04T00:00:00.000Z', createdAt: '2026-11-27T00:00:00.000Z', methods: ['password'] },
  padding: 'x'.repeat(40),
});
const HEADERS = {
  'X-Request-Id': '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b',
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Content-Type': 'application/json; charset=utf-8',
  'Content-Length': String(Buffer.byteLength(BODY)),
};

/** Plain node:http spending `micros` of CPU on each request before answering the fixed bytes. */
async function burningServer(micros) {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const [micros, headers, body] = ${JSON.stringify([micros, HEADERS, BODY])};
       const burn = () => { const until = process.hrtime.bigint() + BigInt(micros * 1000); while (process.hrtime.bigint() < until); };
       require('node:http').createServer((q, s) => { if (micros > 0) burn(); s.writeHead(200, headers); s.end(body); })
         .listen(0, '127.0.0.1', function () { console.log(this.address().port); });`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise((resolve) => child.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim()))));
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, stop: () => child.kill('SIGTERM') };
}

console.error(
  `the ceiling: plain node:http with a CPU budget per request — ${os.availableParallelism()} cores, Node ${process.version}, ${ROUNDS} rounds of ${SECONDS} s`,
);
const servers = new Map();
for (const micros of BUDGETS) servers.set(micros, await burningServer(micros));
const figures = new Map(BUDGETS.map((micros) => [micros, { rps: [], cpu: [] }]));
try {
  for (const server of servers.values()) await runJson('load.mjs', [JSON.stringify({ url: server.url, path: '/', connections: 32, duration: 1 })]);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [micros, server] of servers) {
      const before = mainThreadCpu(server.pid);
      const result = await runJson('load.mjs', [JSON.stringify({ url: server.url, path: '/', connections: 32, duration: SECONDS })]);
      const after = mainThreadCpu(server.pid);
      figures.get(micros).rps.push(result.rps);
      if (before && after) figures.get(micros).cpu.push((1e6 * (after.user - before.user + after.kernel - before.kernel)) / result.requests);
      console.error(`round ${round}, ${micros} µs: ${Math.round(result.rps)}/s`);
    }
  }
} finally {
  for (const server of servers.values()) server.stop();
}
const base = median(figures.get(BUDGETS[0]).rps);
console.log('| CPU spent by the handler | answers/s | share of the first | main-thread CPU per answer (user + kernel) |');
console.log('|---|---|---|---|');
for (const [micros, { rps, cpu }] of figures) {
  const perAnswer = cpu.length > 0 ? `${median(cpu).toFixed(0)} µs` : 'n/a';
  console.log(`| ${micros} µs | ${Math.round(median(rps))} | ${(median(rps) / base).toFixed(2)}× | ${perAnswer} |`);
}
