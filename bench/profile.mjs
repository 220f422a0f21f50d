// A CPU profile of one bench scenario on the built server (V8's sampling profiler, --cpu-prof):
// the session check by default, or a refusal (`--scenario 401|429`). The server runs as `npm start`
// runs it, on SQLite (or DATABASE_URL/REDIS_URL from the environment), under the bench's load for
// `--seconds`; then it stops and the profile's top entries are printed: self time by function, and
// by where the code lives (Gatehouse's own files, Hono, its Node adapter, the drivers, Node itself).
//
//   npm run build && node bench/profile.mjs [--scenario session|401|429] [--seconds 15] [--top 25] [--build <another checkout, built>]
//
// The profile covers the whole process, start included: the longer the load, the less the start weighs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CLI, START_FLAGS, registeredCookie, runJson, startServer } from './lib.mjs';

const { values } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'session' },
    seconds: { type: 'string', default: '15' },
    top: { type: 'string', default: '25' },
    build: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-profile-'));
const env = {
  JWT_SECRET: 'bench-secret-0123456789-0123456789-0123456789',
  BCRYPT_ROUNDS: '4',
  MAIL_DELIVERY: 'worker',
  DATABASE_URL: process.env.DATABASE_URL ?? `sqlite:${path.join(dir, 'profile.db')}`,
  ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
  ...(values.scenario === '429' ? { RATE_LIMIT_LOGIN: '1/1h' } : {}),
};
const cli = values.build === undefined ? CLI : path.join(values.build, 'dist', 'cli.js');
const { child, url } = await startServer(env, { cli, nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...START_FLAGS] });

const email = `profile-${Date.now()}@bench.example`;
const cookie = await registeredCookie(url, email, 'Correct-Horse-9-Profile');
const specs = {
  session: { url, path: '/api/auth/session', headers: { cookie }, connections: 32 },
  401: { url, path: '/api/auth/session', headers: { cookie: 'gatehouse_session=not.a.jwt' }, connections: 32 },
  429: {
    url,
    path: '/api/auth/login',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: { email, password: 'wrong-password-1' },
    connections: 32,
  },
};
const spec = specs[values.scenario];
if (spec === undefined) throw new Error(`unknown scenario ${values.scenario} (session, 401, 429)`);
await runJson('load.mjs', [JSON.stringify({ ...spec, duration: 2 })]);
const figures = await runJson('load.mjs', [JSON.stringify({ ...spec, duration: SECONDS })]);
child.kill('SIGINT');
await new Promise((resolve) => child.once('exit', resolve));

const file = fs.readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
const selfMicros = new Map();
const intervals = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) selfMicros.set(profile.samples[i], (selfMicros.get(profile.samples[i]) ?? 0) + (intervals[i] ?? 0));
const byFunction = new Map();
const byPlace = new Map();
let total = 0;
for (const node of profile.nodes) {
  const micros = selfMicros.get(node.id) ?? 0;
  if (micros === 0) continue;
  const { functionName, url: where, lineNumber } = node.callFrame;
  if (functionName === '(idle)' || functionName === '(program)' || functionName === '(garbage collector)') {
    byPlace.set(functionName, (byPlace.get(functionName) ?? 0) + micros);
    if (functionName !== '(idle)') total += micros;
    continue;
  }
  total += micros;
  const place = placeOf(where);
  const name = `${functionName || '(anonymous)'} ${shortUrl(where)}:${lineNumber + 1}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  byPlace.set(place, (byPlace.get(place) ?? 0) + micros);
}
function placeOf(where) {
  if (where === '') return 'V8 / native';
  if (where.startsWith('node:')) return `node:${where.slice(5).split('/')[0]}`;
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where);
  if (module) return module[1];
  const own = /\/(?:dist|src)\/(.+)$/.exec(where);
  return own ? `gatehouse ${own[1].split('/').slice(0, -1).join('/') || '.'}` : where;
}
function shortUrl(where) {
  return where.replace(/^file:\/\/.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/');
}
const pct = (micros) => `${((100 * micros) / total).toFixed(1).padStart(5)} %`;
console.log(
  `${values.scenario}${values.build === undefined ? '' : ` (${values.build})`}: ${Math.round(figures.rps)} requests/s for ${SECONDS} s under --cpu-prof; busy CPU sampled ${(total / 1e6).toFixed(2)} s, start included`,
);
console.log('\nby where the code lives (self time, share of busy CPU):');
for (const [place, micros] of [...byPlace]
  .filter(([place]) => place !== '(idle)')
  .sort((a, b) => b[1] - a[1])
  .slice(0, 15))
  console.log(`${pct(micros)}  ${place}`);
console.log(`\ntop ${values.top} functions by self time:`);
for (const [name, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) console.log(`${pct(micros)}  ${name}`);
fs.rmSync(dir, { recursive: true, force: true });
