// npm run bench:oidc: what serving as an OpenID Connect provider costs, on SQLite, against one
// running server (the built CLI, its own process), loads from separate autocannon processes:
// 1. the session check (GET /api/auth/session with a valid cookie), the reference: what every
//    application behind Gatehouse asks most, and what the provider must not slow down;
// 2. client-credentials token requests (POST /oauth2/token, HTTP Basic): target ≥ 0.25 × the
//    session check. RATE_LIMIT_OIDC_TOKEN is raised in the server's env so that its per-client and
//    per-IP limit never caps the figure: what is measured is the work, not the limit;
// 3. the JWKS and the discovery document, which every relying party fetches (and caches):
//    target ≥ 0.5 × the session check each;
// 4. refresh-token rotations: a few refresh tokens from the authorization code flow (sign-in,
//    consent, code with PKCE), then one sequential chain per token, each rotation spending the
//    previous token and using the next (no target: a rotation writes and revokes records);
// 5. the session check again, to show its rate unchanged once the provider has served.
// --quick shortens every load. The last line of stdout is the figures as JSON.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { CLI, procStatusMB, runJson, startServer } from './lib.mjs';

const PASSWORD = 'Bench-Password-1';
const APP = 'https://app.example.test/callback';
const TOKEN_LIMIT = '1000000/1m';
const quick = process.argv.includes('--quick');
const SECONDS = quick ? 3 : 8;
/** Seconds of untimed load before each figure, so that it is a warmed-up server's (as run.mjs does). */
const WARMUP = quick ? 1 : 2;
const CONNECTIONS = 32;
/** Concurrent refresh-token chains, each from one authorization code flow of its own. */
const CHAINS = quick ? 8 : 16;

// Run as a load process (see formLoad): autocannon with a raw form body, which load.mjs cannot
// send (it sends JSON), printing the same JSON line as load.mjs.
if (process.argv[2] === '--form-load') {
  const { default: autocannon } = await import('autocannon');
  const spec = JSON.parse(process.argv[3]);
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.duration,
    requests: [{ method: 'POST', path: spec.path, headers: spec.headers, body: spec.form }],
    timeout: 30,
  });
  const statuses = {};
  for (const [key, value] of Object.entries(result)) if (/^\dxx$/.test(key) && value > 0) statuses[key] = value;
  console.log(
    JSON.stringify({
      requests: result.requests.total,
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors: result.errors,
      timeouts: result.timeouts,
      statuses,
    }),
  );
  process.exit(0);
}

if (!fs.existsSync(CLI)) {
  console.error('dist/cli.js is missing: run npm run build first.');
  process.exit(1);
}

const load = (spec) => runJson('load.mjs', [JSON.stringify(spec)]);
const formLoad = (spec) => runJson('oidc.mjs', ['--form-load', JSON.stringify(spec)]);
const fmt = (value, digits = 0) =>
  typeof value === 'number' && Number.isFinite(value)
    ? value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : String(value);

/** A load after `warmup` seconds of the same, as figures: 2xx per second, latencies, what was not 2xx. */
async function measured(spec, run = load, warmup = WARMUP) {
  await run({ ...spec, connections: CONNECTIONS, duration: warmup });
  const result = await run({ ...spec, connections: CONNECTIONS, duration: SECONDS });
  const ok = result.statuses['2xx'] ?? 0;
  return { rps: ok / SECONDS, p50: result.p50, p99: result.p99, other: result.requests - ok + result.errors + result.timeouts };
}

function serverEnv(file) {
  return {
    NODE_ENV: 'development', // http on loopback for the issuer, as the tests run it
    DATABASE_URL: `sqlite:${file}`,
    JWT_SECRET: 'bench-secret-0123456789-0123456789-0123456789',
    ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'),
    ADMIN_API_KEY: randomBytes(32).toString('base64'),
    BCRYPT_ROUNDS: '10',
    MAIL_DELIVERY: 'worker',
    RATE_LIMIT_REGISTER: '999999999/1s',
    RATE_LIMIT_LOGIN: '999999999/1s',
    RATE_LIMIT_OIDC_TOKEN: TOKEN_LIMIT,
    RATE_LIMIT_OIDC_AUTHORIZE: '999999999/1s', // the code flows that start the refresh chains
  };
}

const basic = (clientId, secret) => `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** The issuer's origin (BASE_URL, http://localhost:<port> here) seen from one cookie jar, as a browser. */
function browser(origin) {
  const jar = new Map();
  const cookie = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
  const keep = (response) => {
    for (const header of response.headers.getSetCookie()) {
      const pair = header.split(';')[0];
      const at = pair.indexOf('=');
      if (pair.slice(at + 1) === '' || /max-age=0/i.test(header)) jar.delete(pair.slice(0, at));
      else jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
  };
  return {
    cookie,
    async json(pathname, body) {
      const response = await fetch(new URL(pathname, origin), {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin, cookie: cookie() },
        body: JSON.stringify(body),
      });
      keep(response);
      return { status: response.status, body: await response.json().catch(() => null) };
    },
    /** Follows redirects while they stay on the issuer's origin; the first URL that leaves it, or the last answer. */
    async open(start, form) {
      let url = new URL(start, origin);
      let body = form ? new URLSearchParams(form).toString() : undefined;
      for (let hop = 0; hop < 15; hop++) {
        if (url.origin !== origin) return { url, response: null };
        const headers = { cookie: cookie(), accept: 'text/html', ...(body ? { 'content-type': 'application/x-www-form-urlencoded', origin } : {}) };
        const response = await fetch(url, { method: body ? 'POST' : 'GET', headers, body, redirect: 'manual' });
        keep(response);
        const location = response.headers.get('location');
        if (response.status < 300 || response.status >= 400 || !location) return { url, response };
        await response.arrayBuffer();
        url = new URL(location, url);
        body = undefined;
      }
      throw new Error('too many redirects');
    },
  };
}

async function tokenRequest(tokenUrl, authorization, form) {
  const response = await fetch(tokenUrl, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, body: await response.json().catch(() => null) };
}

/** One authorization code flow with PKCE and offline_access, as a person signs in and consents: its refresh token. */
async function refreshTokenFromCodeFlow(discovery, client, email) {
  const origin = new URL(discovery.issuer).origin;
  const person = browser(origin);
  const signedIn = await person.json('/api/auth/login', { email, password: PASSWORD });
  if (signedIn.status !== 200) throw new Error(`sign-in answered ${signedIn.status}: ${JSON.stringify(signedIn.body)}`);
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const authorize = new URL(discovery.authorization_endpoint);
  authorize.search = new URLSearchParams({
    client_id: client.clientId,
    redirect_uri: APP,
    response_type: 'code',
    scope: 'openid email offline_access',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state,
    prompt: 'consent',
  }).toString();
  let step = await person.open(authorize);
  if (step.response) {
    const page = await step.response.text();
    if (step.response.status !== 200 || !step.url.pathname.startsWith('/consent/')) {
      throw new Error(`expected the consent page, ${step.url.pathname} answered ${step.response.status}: ${page.slice(0, 2000)}`);
    }
    step = await person.open(step.url, { decision: 'allow' });
  }
  const code = step.url.searchParams.get('code');
  if (step.url.origin + step.url.pathname !== APP || !code || step.url.searchParams.get('state') !== state) {
    throw new Error(`the flow did not come back with a code: ${step.url}`);
  }
  const tokens = await tokenRequest(discovery.token_endpoint, basic(client.clientId, client.clientSecret), {
    grant_type: 'authorization_code',
    code,
    redirect_uri: APP,
    code_verifier: verifier,
  });
  if (tokens.status !== 200 || !tokens.body?.refresh_token) throw new Error(`the code grant answered ${tokens.status}: ${JSON.stringify(tokens.body)}`);
  return tokens.body.refresh_token;
}

/**
 * CHAINS sequential chains of rotations for `seconds`: each request spends the chain's refresh
 * token and the answer's is the next one (never reused, so reuse detection never fires). Requests
 * come from this process over keep-alive; a chain that is refused stops, and is counted.
 */
async function rotations(tokenUrl, authorization, tokens, seconds) {
  const end = performance.now() + seconds * 1000;
  const latencies = [];
  let refused = 0;
  await Promise.all(
    tokens.map(async (first, index) => {
      let token = first;
      while (performance.now() < end) {
        const started = performance.now();
        const answer = await tokenRequest(tokenUrl, authorization, { grant_type: 'refresh_token', refresh_token: token });
        if (answer.status !== 200 || !answer.body?.refresh_token) {
          refused += 1;
          console.error(`chain ${index}: rotation answered ${answer.status}: ${JSON.stringify(answer.body)}`);
          return;
        }
        latencies.push(performance.now() - started);
        token = answer.body.refresh_token;
        tokens[index] = token; // the next measure continues from here
      }
    }),
  );
  const sorted = latencies.sort((a, b) => a - b);
  return { rps: sorted.length / seconds, p50: sorted[Math.floor(sorted.length / 2)], p99: sorted[Math.floor(sorted.length * 0.99)], refused };
}

/** Rotations after WARMUP seconds of the same, on the chains of `tokens`. */
async function measuredRotations(tokenUrl, authorization, tokens) {
  await rotations(tokenUrl, authorization, tokens, WARMUP);
  return rotations(tokenUrl, authorization, tokens, SECONDS);
}

async function measure(env) {
  console.error('\n[SQLite] starting the server');
  const server = await startServer(env);
  const { url } = server;
  const figures = { startupMs: server.startupMs };
  try {
    // The endpoints a discovery document names follow the host it was asked on: asked on the
    // issuer's own origin (BASE_URL, http://localhost:<port>), they share its cookies, as in a browser.
    const { issuer } = await (await fetch(`${url}/.well-known/openid-configuration`)).json();
    const origin = new URL(issuer).origin;
    const discovery = await (await fetch(`${origin}/.well-known/openid-configuration`)).json();
    const session = browser(origin);
    const registered = await session.json('/api/auth/register', { email: 'bench@bench.example', password: PASSWORD });
    if (registered.status !== 201 && registered.status !== 200) throw new Error(`register answered ${registered.status}: ${JSON.stringify(registered.body)}`);
    const sessionSpec = { url, path: '/api/auth/session', headers: { cookie: session.cookie() } };

    // The first load on a fresh server: a longer warm-up, so that the reference is a warmed-up
    // server's (optimised code) like every figure after it, not one still compiling.
    console.error('[SQLite] session checks, the reference');
    figures.sessionBefore = await measured(sessionSpec, load, 3 * WARMUP);

    console.error('[SQLite] client-credentials token requests');
    const admin = async (body) => {
      const response = await fetch(`${origin}/api/admin/clients`, {
        method: 'POST',
        headers: { authorization: `Bearer ${env.ADMIN_API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = await response.json().catch(() => null);
      if (response.status !== 201 || !answer?.clientSecret) throw new Error(`POST /api/admin/clients answered ${response.status}: ${JSON.stringify(answer)}`);
      return { clientId: answer.client.clientId, clientSecret: answer.clientSecret };
    };
    const machine = await admin({ name: 'Bench batch job', grantTypes: ['client_credentials'] });
    const tokenPath = new URL(discovery.token_endpoint).pathname;
    const check = await tokenRequest(discovery.token_endpoint, basic(machine.clientId, machine.clientSecret), { grant_type: 'client_credentials' });
    if (check.status !== 200 || !check.body?.access_token) throw new Error(`client credentials answered ${check.status}: ${JSON.stringify(check.body)}`);
    figures.clientCredentials = await measured(
      {
        url,
        path: tokenPath,
        headers: { authorization: basic(machine.clientId, machine.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
        form: 'grant_type=client_credentials',
      },
      formLoad,
    );

    console.error('[SQLite] JWKS, then discovery');
    figures.jwks = await measured({ url, path: new URL(discovery.jwks_uri).pathname });
    figures.discovery = await measured({ url, path: '/.well-known/openid-configuration' });

    console.error(`[SQLite] ${CHAINS} authorization code flows for refresh tokens, then rotations`);
    const app = await admin({ name: 'Bench app', redirectUris: [APP] });
    const tokens = [];
    for (let i = 0; i < CHAINS; i++) {
      const email = `chain-${i}@bench.example`;
      const person = await browser(origin).json('/api/auth/register', { email, password: PASSWORD });
      if (person.status !== 201 && person.status !== 200) throw new Error(`register answered ${person.status}: ${JSON.stringify(person.body)}`);
      tokens.push(await refreshTokenFromCodeFlow(discovery, app, email));
    }
    figures.rotations = { chains: CHAINS, ...(await measuredRotations(discovery.token_endpoint, basic(app.clientId, app.clientSecret), tokens)) };

    console.error('[SQLite] session checks again, after the provider has served');
    figures.sessionAfter = await measured(sessionSpec);
    figures.peakRssMB = procStatusMB(server.child.pid, 'VmHWM');
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
  }
  return figures;
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

const cores = os.availableParallelism();
console.error(`Gatehouse OpenID Connect benchmark — ${cores} cores, ${os.cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`);
console.error('[machine] plain node:http, before the run');
const referenceBefore = await machineReference();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-oidc-'));
let figures;
try {
  figures = await measure(serverEnv(path.join(dir, 'bench.db')));
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
console.error('[machine] plain node:http, after the run');
const referenceAfter = await machineReference();

// ---------------------------------------------------------------------------------------------

const reference = figures.sessionBefore.rps;
/** A load's figure, its latencies, and what was not 2xx when anything was. */
const shown = (m) => `${fmt(m.rps)}/s p50 ${fmt(m.p50, 1)} ms p99 ${fmt(m.p99, 1)} ms${m.other ? `, ${fmt(m.other)} not 2xx` : ''}`;
const toReference = (m) => m.rps / reference;
const rows = [
  { name: 'session check, at the start (the reference)', show: (f) => shown(f.sessionBefore), target: '' },
  {
    name: `client-credentials token (POST /oauth2/token, Basic), to the session check`,
    show: (f) => `${shown(f.clientCredentials)} = ${fmt(toReference(f.clientCredentials), 2)}×`,
    target: '≥ 0.25 × session check',
    ok: (f) => toReference(f.clientCredentials) >= 0.25 && f.clientCredentials.other === 0,
  },
  {
    name: 'JWKS (GET /oauth2/jwks), to the session check',
    show: (f) => `${shown(f.jwks)} = ${fmt(toReference(f.jwks), 2)}×`,
    target: '≥ 0.5 × session check',
    ok: (f) => toReference(f.jwks) >= 0.5 && f.jwks.other === 0,
  },
  {
    name: 'discovery (GET /.well-known/openid-configuration), to the session check',
    show: (f) => `${shown(f.discovery)} = ${fmt(toReference(f.discovery), 2)}×`,
    target: '≥ 0.5 × session check',
    ok: (f) => toReference(f.discovery) >= 0.5 && f.discovery.other === 0,
  },
  {
    name: `refresh-token rotations (${figures.rotations.chains} sequential chains)`,
    show: (f) =>
      `${fmt(f.rotations.rps)}/s p50 ${fmt(f.rotations.p50, 1)} ms p99 ${fmt(f.rotations.p99, 1)} ms${f.rotations.refused ? `, ${f.rotations.refused} refused` : ''}`,
    target: '',
  },
  {
    name: 'session check, at the end (to the start)',
    show: (f) => `${shown(f.sessionAfter)} = ${fmt(f.sessionAfter.rps / reference, 2)}×`,
    target: '',
  },
  { name: 'peak RSS', show: (f) => `${fmt(f.peakRssMB, 1)} MB`, target: '' },
];
const verdict = (row) => {
  if (!row.target || !row.ok) return '';
  return row.ok(figures) ? 'met' : '**NOT MET**';
};
console.log(`\nGatehouse OpenID Connect benchmark${quick ? ' (--quick)' : ''} — ${cores} cores, Node ${process.version}, ${new Date().toISOString()}`);
console.log(
  `This machine in this run: plain node:http answers ${fmt(referenceBefore)}/s before the run and ${fmt(referenceAfter)}/s after (fixed JSON, 32 connections).`,
);
console.log(
  `One server on SQLite; loads at ${CONNECTIONS} connections for ${SECONDS} s each after ${WARMUP} s of warm-up (${3 * WARMUP} s before the first). RATE_LIMIT_OIDC_TOKEN=${TOKEN_LIMIT} in the server's env, so the token limit (per client and per IP) never caps these figures.\n`,
);
console.log('| measure | SQLite | target |');
console.log('|---|---|---|');
for (const row of rows) console.log(`| ${row.name} | ${`${row.show(figures)} ${verdict(row)}`.trim()} | ${row.target} |`);
console.log(JSON.stringify({ quick, cores, referenceBefore, referenceAfter, tokenLimit: TOKEN_LIMIT, figures }));
