// The per-request cost of the metrics (docs/metrics.md): session checks through
// `gatehouse.fetch`, in one process, for this build and another build, in CPU µs per request, (the commit before the
// metrics), in alternating rounds so a drifting machine weighs on both alike. No HTTP, no sockets:
// only the work Gatehouse itself does for a request.
//
//   git archive <commit> | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/ && (cd /tmp/base && npx tsc -p tsconfig.build.json)
//   npm run build && node bench/metrics-cost.mjs /tmp/base
import path from 'node:path';
import { Hono } from 'hono';
import { pathToFileURL } from 'node:url';

const baseline = process.argv[2];
if (!baseline) {
  console.error('usage: node bench/metrics-cost.mjs <another checkout, built>');
  process.exit(2);
}
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const MS = Number(process.env.ROUND_MS ?? 2000);

async function setUp(dir) {
  const lib = await import(pathToFileURL(path.join(dir, 'dist', 'index.js')).href);
  const config = lib.loadConfig({
    JWT_SECRET: 'bench-secret-0123456789-0123456789-0123456789',
    BCRYPT_ROUNDS: '4',
    DATABASE_URL: 'sqlite::memory:',
    LOG_LEVEL: 'silent',
    MAIL_DELIVERY: 'worker',
  });
  const gatehouse = await lib.createGatehouse(config, { mailer: null });
  const info = { remoteAddress: '203.0.113.9' };
  const registered = await gatehouse.fetch(
    new Request('http://localhost:3000/api/auth/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.com', password: 'Correct-Horse-9' }),
    }),
    info,
  );
  const cookie = registered.headers.getSetCookie()[0].split(';')[0];
  const check = async () => {
    const response = await gatehouse.fetch(new Request('http://localhost:3000/api/auth/session', { headers: { cookie } }), info);
    if (response.status !== 200) throw new Error(`session check: ${response.status}`);
    await response.arrayBuffer();
  };
  return { gatehouse, check };
}

/**
 * CPU time of `n` requests, in µs each: this process's CPU, not the wall clock, so other work on
 * a shared machine (which delays us without costing us CPU) weighs less.
 */
async function slice(check, n) {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await check();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

const subjects = { this: await setUp(process.cwd()), base: await setUp(baseline) };
for (const s of Object.values(subjects)) for (let i = 0; i < 3000; i++) await s.check();
// Slices of 100 checks alternate between the builds, so a drifting machine weighs on both alike;
// each round's figure is the median of its slices.
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = { this: [], base: [] };
for (let r = 0; r < ROUNDS; r++) {
  const slices = { this: [], base: [] };
  const end = performance.now() + MS;
  while (performance.now() < end) {
    for (const name of slices.this.length % 2 === 0 ? ['base', 'this'] : ['this', 'base']) slices[name].push(await slice(subjects[name].check, 100));
  }
  for (const name of ['base', 'this']) results[name].push(median(slices[name]));
  console.log(`round ${r + 1}: base ${median(slices.base).toFixed(1)} µs, this ${median(slices.this).toFixed(1)} µs per session check`);
}
const [a, b] = [median(results.base), median(results.this)];
console.log(`median: base ${a.toFixed(1)} µs, this ${b.toFixed(1)} µs; difference ${(b - a).toFixed(1)} µs (${(((b - a) / a) * 100).toFixed(1)} %)`);
for (const s of Object.values(subjects)) await s.gatehouse.close();

// The middleware alone, without a database's noise: a bare Hono app shaped like Gatehouse's (two
// middlewares, a mounted sub-app), with and without the metrics middleware in front.
const { measureRequests } = await import(pathToFileURL(path.join(process.cwd(), 'dist', 'metrics', 'http.js')).href);
const { createMetricsRecorder } = await import(pathToFileURL(path.join(process.cwd(), 'dist', 'metrics', 'recorder.js')).href);
function bareApp(withMetrics) {
  const app = new Hono();
  if (withMetrics) app.use('*', measureRequests(createMetricsRecorder()));
  app.use('*', async (_c, next) => next());
  app.use('/api/*', async (_c, next) => next());
  app.route(
    '/api/auth',
    new Hono().get('/session', (c) => c.json({ ok: true })).delete('/sessions/:id', (c) => c.json({ ok: true })),
  );
  return app;
}
const bare = { base: bareApp(false), this: bareApp(true) };
const bareCheck = (app) => async () => void (await app.fetch(new Request('http://localhost/api/auth/session')));
for (const app of Object.values(bare)) await slice(bareCheck(app), 20000);
const bareSlices = { this: [], base: [] };
for (let i = 0; i < 200; i++) for (const name of i % 2 ? ['this', 'base'] : ['base', 'this']) bareSlices[name].push(await slice(bareCheck(bare[name]), 500));
const [bareBase, bareThis] = [median(bareSlices.base), median(bareSlices.this)];
console.log(
  `the middleware alone (bare Hono app): ${bareBase.toFixed(2)} µs without, ${bareThis.toFixed(2)} µs with: ${(bareThis - bareBase).toFixed(2)} µs per request`,
);
