/**
 * The code of docs/oidc-provider.md, run as written against a real Gatehouse on each database:
 * the server-side web app (`web-app.mjs`) signs a person in through /login and the consent page,
 * shows their claims, refreshes its access token and ends the person's session when Gatehouse
 * sends a back-channel logout; the API (`api.mjs`) accepts a token the
 * service (`service.mjs`) got by client credentials for its resource, and refuses one for another
 * resource; the device (`device.mjs`) is signed in once a person enters its code at /device.
 * Each block runs as its own process, from a file inside the repository so
 * `openid-client` and `jose` resolve as they would in an app.
 *
 * Claims of its prose are checked too: a JWT access token cannot be revoked or introspected (it
 * verifies until it expires) while an opaque one introspects `active: false` at once after
 * revocation; a native app's loopback redirect works on any port; a single-page app gets CORS
 * answers from its redirect URIs' origin only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startServer, type RunningServer } from '../src/server.js';
import { freePort } from './support/free-port.js';
import { STRONG_PASSWORD, TEST_JWT_SECRET, describeEachDialect, openTestDatabase } from './support/harness.js';
import { createTestBrowser } from './support/oidc-browser.js';

const ADMIN_KEY = 'oidc-provider-doc-admin-key-0123456789';
const RESOURCE = 'https://api.example.test';
const OTHER_RESOURCE = 'https://other-api.example.test';
/** The web app's public address; the test reaches it on its loopback port, as a proxy would. */
const APP_URL = 'http://webapp.example.test';

/** The code block of docs/oidc-provider.md whose first line names `file`. */
function snippet(file: string): string {
  const doc = readFileSync('docs/oidc-provider.md', 'utf8');
  const block = new RegExp('```js\\n(// ' + file.replace('.', '\\.') + ':[\\s\\S]*?)```').exec(doc)?.[1];
  if (block === undefined) throw new Error(`docs/oidc-provider.md has no ${file} block`);
  return block;
}

const written: string[] = [];
const children: ChildProcess[] = [];

/** Writes the block to a file under test-results/ (inside the repository, beside node_modules). */
function fileOf(name: string): string {
  const file = path.resolve('test-results', `${name.replace('.mjs', '')}-${randomBytes(4).toString('hex')}.mjs`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, snippet(name));
  written.push(file);
  return file;
}

/** Starts a documented server on a free port and waits until it answers. */
async function startSnippet(name: string, env: Record<string, string>): Promise<{ url: string; output: () => string }> {
  const port = await freePort();
  let output = '';
  const child = spawn(process.execPath, [fileOf(name)], { env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) } });
  children.push(child);
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${output}`);
    if (
      await fetch(url, { redirect: 'manual' }).then(
        () => true,
        () => false,
      )
    )
      return { url, output: () => output };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${name} did not start: ${output}`);
}

/** Runs a documented script to its end; its standard output. */
async function runSnippet(name: string, env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [fileOf(name)], { env: { PATH: process.env.PATH ?? '', ...env } });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`${name} exited ${code}: ${stderr}`);
  return stdout.trim();
}

/** Runs a documented script that talks while it waits: each line it prints, and its whole output at its end. */
function startScript(name: string, env: Record<string, string>): { line(pattern: RegExp): Promise<RegExpExecArray>; exited: Promise<string> } {
  const child = spawn(process.execPath, [fileOf(name)], { env: { PATH: process.env.PATH ?? '', ...env } });
  children.push(child);
  let stdout = '';
  let stderr = '';
  const waiting: Array<() => void> = [];
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const wake of waiting.splice(0)) wake();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<string>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${name} exited ${code}: ${stderr}`)))),
  );
  return {
    async line(pattern) {
      for (;;) {
        const found = stdout
          .split('\n')
          .map((each) => pattern.exec(each))
          .find((match) => match !== null);
        if (found) return found;
        if (child.exitCode !== null) throw new Error(`${name} exited: ${stdout}${stderr}`);
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
    },
    exited,
  };
}

/** The hidden fields and action of one of the engine's forms on a page. */
function formOf(page: string, id: string): { action: string; fields: Record<string, string> } {
  const form = new RegExp(`<form[^>]*id="${id.replace('.', '\\.')}"[^>]*>([\\s\\S]*?)</form>`).exec(page);
  if (form === null) throw new Error(`no form ${id} in ${page}`);
  const action = /action="([^"]+)"/.exec(form[0])![1]!;
  const fields = Object.fromEntries([...form[1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((match) => [match[1]!, match[2]!]));
  return { action, fields };
}

afterAll(() => {
  for (const child of children) child.kill();
  for (const file of written) rmSync(file, { force: true });
});

describeEachDialect('docs/oidc-provider.md, run as written', (dialect) => {
  let server: RunningServer;
  let drop: () => Promise<void>;
  let api: { url: string };

  beforeAll(async () => {
    let database;
    ({ database, drop } = await openTestDatabase(dialect));
    const config = loadConfig({
      JWT_SECRET: TEST_JWT_SECRET,
      BCRYPT_ROUNDS: '4',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      ADMIN_API_KEY: ADMIN_KEY,
      ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'),
      OIDC_RESOURCES: `${RESOURCE},${OTHER_RESOURCE}`,
      // The web app refreshes when less than a minute is left: with 1m, at every page it shows.
      OIDC_ACCESS_TOKEN_TTL: '1m',
    });
    // The real clock: the snippets check the tokens' times against their own.
    server = await startServer(config, { database, logger: createLogger({ level: 'silent' }) });
    api = await startSnippet('api.mjs', { GATEHOUSE_URL: issuer(), API_RESOURCE: RESOURCE });
  });
  afterAll(async () => {
    await server?.stop();
    await drop?.();
  });

  const issuer = (): string => server.gatehouse.config.baseUrl;

  async function registerClient(body: Record<string, unknown>): Promise<{ clientId: string; clientSecret: string }> {
    const response = await fetch(`${issuer()}/api/admin/clients`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(201);
    const answer = (await response.json()) as { client: { clientId: string }; clientSecret: string };
    return { clientId: answer.client.clientId, clientSecret: answer.clientSecret };
  }

  const register = (email: string): Promise<Response> =>
    fetch(`${issuer()}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: issuer() },
      body: JSON.stringify({ email, password: STRONG_PASSWORD }),
    });

  async function tokensIssued(grantType: string): Promise<number> {
    const text = await (await fetch(`${issuer()}/metrics`)).text();
    const line = text.split('\n').find((each) => each.startsWith(`gatehouse_oidc_tokens_issued_total{grant_type="${grantType}"}`));
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  }

  test('the service gets a token by client credentials that the API accepts; a token for another API is refused', { timeout: 60_000 }, async () => {
    const { clientId, clientSecret } = await registerClient({ name: 'Nightly report', grantTypes: ['client_credentials'] });
    const env = { GATEHOUSE_URL: issuer(), CLIENT_ID: clientId, CLIENT_SECRET: clientSecret, API_URL: `${api.url}/reports` };

    const accepted = await runSnippet('service.mjs', { ...env, API_RESOURCE: RESOURCE });
    const [status, body] = [accepted.slice(0, 3), accepted.slice(4)];
    expect(status).toBe('200');
    expect(JSON.parse(body)).toMatchObject({ sub: clientId, clientId });

    expect(await runSnippet('service.mjs', { ...env, API_RESOURCE: OTHER_RESOURCE })).toBe('401');
    expect(await runSnippet('service.mjs', { ...env, CLIENT_SECRET: 'not-the-secret', API_RESOURCE: RESOURCE }).catch((error: Error) => error.message)).toMatch(
      /exited 1/,
    );
    expect((await fetch(`${api.url}/reports`)).status).toBe(401);
    expect((await fetch(`${api.url}/reports`, { headers: { authorization: 'Bearer not.a.token' } })).status).toBe(401);
  });

  test(
    'a JWT access token cannot be revoked or introspected: it verifies until it expires; an opaque one is inactive at once after revocation',
    { timeout: 30_000 },
    async () => {
      const { clientId, clientSecret } = await registerClient({ name: 'Revoked', grantTypes: ['client_credentials'] });
      const config = await oidc.discovery(new URL(issuer()), clientId, undefined, oidc.ClientSecretBasic(clientSecret), {
        execute: [oidc.allowInsecureRequests],
      });
      const { access_token: jwt } = await oidc.clientCredentialsGrant(config, { resource: RESOURCE });
      const call = (token: string): Promise<number> =>
        fetch(`${api.url}/`, { headers: { authorization: `Bearer ${token}` } }).then((response) => response.status);
      expect(await call(jwt)).toBe(200);
      await expect(oidc.tokenRevocation(config, jwt)).rejects.toMatchObject({ error: 'unsupported_token_type' });
      await expect(oidc.tokenIntrospection(config, jwt)).rejects.toMatchObject({ error: 'unsupported_token_type' });
      expect(await call(jwt)).toBe(200);

      const { access_token: opaque } = await oidc.clientCredentialsGrant(config);
      expect(await call(opaque)).toBe(401);
      expect(await oidc.tokenIntrospection(config, opaque)).toMatchObject({ active: true, client_id: clientId });
      await oidc.tokenRevocation(config, opaque);
      expect((await oidc.tokenIntrospection(config, opaque)).active).toBe(false);
    },
  );

  test('the device signs in once the person enters its code at /device, signs in and allows it', { timeout: 60_000 }, async () => {
    const email = `tv-${randomBytes(4).toString('hex')}@example.com`;
    expect((await register(email)).status).toBe(201);
    const { clientId } = await registerClient({ name: 'Living-room TV', public: true, grantTypes: ['device_code', 'refresh_token'] });
    const device = startScript('device.mjs', { GATEHOUSE_URL: issuer(), CLIENT_ID: clientId });
    const shown = await device.line(/^Open (\S+) and enter the code (\S+)$/);
    expect(shown[1]).toBe(`${issuer()}/device`);

    const browser = createTestBrowser(issuer());
    const entry = formOf(await (await browser.open(shown[1]!)).response!.text(), 'op.deviceInputForm');
    // Typed as a person might: lower case, no dash.
    const typed = shown[2]!.replace('-', '').toLowerCase();
    const confirmPage = await (
      await browser.open(new URL(entry.action, issuer()), { method: 'POST', form: { ...entry.fields, user_code: typed } })
    ).response!.text();
    expect(confirmPage).toContain(shown[2]);
    const confirm = formOf(confirmPage, 'op.deviceConfirmForm');
    let step = await browser.open(new URL(confirm.action, issuer()), { method: 'POST', form: confirm.fields });
    expect(step.url.pathname).toBe('/login');
    await browser.signIn(email, STRONG_PASSWORD);
    step = await browser.open(step.url.searchParams.get('return_to')!);
    await browser.open(step.url, { method: 'POST', form: { decision: 'allow' } });

    const output = await device.exited;
    const id = (await (await fetch(`${issuer()}/api/admin/users?query=${email}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()) as {
      users: { id: string }[];
    };
    expect(output.trim().split('\n').at(-1)).toBe(`signed in as ${id.users[0]!.id}`);
  });

  test('a native app redirects to its private-use scheme, or to a registered loopback URI on any port', async () => {
    const { clientId } = await registerClient({ name: 'Desktop', public: true, redirectUris: ['http://127.0.0.1/callback', 'com.example.app:/callback'] });
    const authorize = async (redirectUri: string): Promise<{ status: number; to: string }> => {
      const config = await oidc.discovery(new URL(issuer()), clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      });
      const response = await fetch(url, { redirect: 'manual' });
      return { status: response.status, to: new URL(response.headers.get('location') ?? '/', issuer()).pathname };
    };
    for (const redirectUri of ['http://127.0.0.1:49152/callback', 'http://127.0.0.1:61000/callback', 'com.example.app:/callback']) {
      expect((await authorize(redirectUri)).to).toMatch(/^\/consent\//);
    }
    expect(await authorize('http://127.0.0.1:49152/elsewhere')).toEqual({ status: 400, to: '/' });
  });

  test("a single-page app's token requests get CORS answers from its redirect URIs' origin only", async () => {
    const { clientId } = await registerClient({ name: 'SPA', public: true, redirectUris: ['https://spa.example.test/callback'] });
    const tokenRequest = (origin: string): Promise<Response> =>
      fetch(`${issuer()}/oauth2/token`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'spent', client_id: clientId }).toString(),
      });
    const own = await tokenRequest('https://spa.example.test');
    expect(own.status).toBe(400);
    expect(own.headers.get('access-control-allow-origin')).toBe('https://spa.example.test');
    expect((await tokenRequest('https://elsewhere.example.test')).headers.get('access-control-allow-origin')).toBeNull();
  });

  test('the web app signs a person in, shows their claims and refreshes; a person who says no gets no session', { timeout: 60_000 }, async () => {
    const email = `doc-${randomBytes(4).toString('hex')}@example.com`;
    const registered = await fetch(`${issuer()}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: issuer() },
      body: JSON.stringify({ email, password: STRONG_PASSWORD }),
    });
    expect(registered.status).toBe(201);
    const { clientId, clientSecret } = await registerClient({ name: 'Web app', redirectUris: [`${APP_URL}/callback`] });
    const app = await startSnippet('web-app.mjs', { GATEHOUSE_URL: issuer(), CLIENT_ID: clientId, CLIENT_SECRET: clientSecret, APP_URL });

    /** One visitor of the app: its own cookie, and Gatehouse's browser. */
    const visitor = () => {
      let cookie = '';
      const get = async (target: string): Promise<Response> => {
        const url = new URL(target, APP_URL);
        const response = await fetch(`${app.url}${url.pathname}${url.search}`, { headers: { cookie }, redirect: 'manual' });
        cookie = response.headers.getSetCookie()[0]?.split(';')[0] ?? cookie;
        return response;
      };
      return { get, browser: createTestBrowser(issuer()) };
    };

    async function throughGatehouse(person: ReturnType<typeof visitor>, decision: 'allow' | 'deny'): Promise<Response> {
      const start = await person.get('/');
      expect(start.headers.get('location')).toBe('/login');
      const toGatehouse = await person.get('/login');
      const authorize = new URL(toGatehouse.headers.get('location')!);
      expect(authorize.origin + authorize.pathname).toBe(`${issuer()}/oauth2/authorize`);
      expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
      let step = await person.browser.open(authorize);
      expect(step.url.pathname).toBe('/login');
      await person.browser.signIn(email, STRONG_PASSWORD);
      step = await person.browser.open(step.url.searchParams.get('return_to')!);
      expect(await step.response!.text()).toContain('Web app');
      step = await person.browser.open(step.url, { method: 'POST', form: { decision } });
      expect(step.url.origin + step.url.pathname).toBe(`${APP_URL}/callback`);
      return person.get(step.url.href);
    }

    const ana = visitor();
    const back = await throughGatehouse(ana, 'allow');
    expect(back.status).toBe(302);
    expect(back.headers.get('location')).toBe('/');
    const refreshesBefore = await tokensIssued('refresh_token');
    for (let page = 0; page < 2; page++) {
      const shown = await ana.get('/');
      expect(shown.status).toBe(200);
      const { signedIn, profile } = (await shown.json()) as { signedIn: Record<string, unknown>; profile: Record<string, unknown> };
      expect(signedIn).toMatchObject({ iss: issuer(), aud: clientId, amr: ['pwd'] });
      expect(typeof signedIn.auth_time).toBe('number');
      expect(profile).toEqual({ sub: signedIn.sub, email, email_verified: false });
    }
    // Each page refreshed (a minute's token is always within the app's minute), the second with the first's new refresh token.
    expect(await tokensIssued('refresh_token')).toBe(refreshesBefore + 2);

    // Signing out of Gatehouse tells the app over the back channel, and the app ends Ana's session.
    const patched = await fetch(`${issuer()}/api/admin/clients/${clientId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ backchannelLogoutUri: `${app.url}/backchannel-logout` }),
    });
    expect(patched.status).toBe(200);
    const forged = await fetch(`${app.url}/backchannel-logout`, { method: 'POST', body: 'logout_token=not.a.token' });
    expect(forged.status).toBe(400);
    expect((await ana.get('/')).status).toBe(200);
    const signedOut = await fetch(`${issuer()}/api/auth/logout`, { method: 'POST', headers: { cookie: ana.browser.cookieHeader(), origin: issuer() } });
    expect(signedOut.status).toBe(200);
    let after = await ana.get('/');
    for (let i = 0; i < 100 && after.status === 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await ana.get('/');
    }
    expect(after.headers.get('location')).toBe('/login');

    const bob = visitor();
    const refused = await throughGatehouse(bob, 'deny');
    expect(refused.status).toBe(400);
    expect(await refused.text()).toBe('Sign-in failed: access_denied');
    expect((await bob.get('/')).headers.get('location')).toBe('/login');
    expect(app.output()).toBe('');
  });
});
