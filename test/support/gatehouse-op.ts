/**
 * A running Gatehouse as an OpenID Provider, for tests that drive it from the outside as any
 * client library would: a real server on loopback (PORT=0) over a real database, a clock the test
 * moves, one person who signs in, clients registered over the admin API, and a browser that goes
 * through /login and the consent page until the redirect back to the app. The token, introspection
 * and revocation endpoints are also reachable raw, for tests that assert the exact OAuth error.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { MockClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startServer, type RunningServer } from '../../src/server.js';
import type { DatabaseHandle } from '../../src/db/connect.js';
import { STRONG_PASSWORD, TEST_JWT_SECRET, openTestDatabase, type Dialect, type SentEmail } from './harness.js';
import { createTestBrowser, type TestBrowser } from './oidc-browser.js';

export const OP_ADMIN_KEY = 'gatehouse-op-test-admin-key-0123456789';
export const OP_RESOURCE = 'https://api.example.test';

export interface RegisteredClient {
  clientId: string;
  /** A confidential client's secret; undefined for a public client. */
  clientSecret: string | undefined;
}

export interface Person {
  email: string;
  id: string;
}

/** An OAuth answer as it came: status, Location, and the JSON body (or null). */
export interface RawAnswer {
  status: number;
  location: string | null;
  body: Record<string, unknown> | null;
}

export interface GatehouseOp {
  server: RunningServer;
  clock: MockClock;
  /** The server's database, for a test's fixtures and to read what it stored. */
  database: DatabaseHandle;
  /** The emails the server sent so far (queued ones are sent first), as the recipients would read them. */
  sentEmails(): Promise<SentEmail[]>;
  issuer(): string;
  registerPerson(): Promise<Person>;
  registerClient(body: Record<string, unknown>): Promise<RegisteredClient>;
  /**
   * Plays `person`'s browser from the authorization URL through /login (once per person: the
   * browser keeps its session) and the consent page (Allow), and returns the URL it was sent to
   * off Gatehouse's origin — the redirect back to the app.
   */
  authorize(person: Person, url: URL): Promise<URL>;
  /** A POST to an endpoint under /oauth2/ with a form body and, when given, HTTP Basic. */
  post(path: string, form: Record<string, string>, basic?: RegisteredClient): Promise<RawAnswer>;
  stop(): Promise<void>;
}

function basicHeader(client: RegisteredClient): string {
  const encode = (value: string): string => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(client.clientId)}:${encode(client.clientSecret ?? '')}`).toString('base64')}`;
}

export async function readAnswer(response: Response): Promise<RawAnswer> {
  const text = await response.text();
  let body: Record<string, unknown> | null;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = null;
  }
  return { status: response.status, location: response.headers.get('location'), body };
}

export async function startGatehouseOp(dialect: Dialect): Promise<GatehouseOp> {
  const { database, drop } = await openTestDatabase(dialect);
  const clock = new MockClock(Date.now());
  const config = loadConfig({
    JWT_SECRET: TEST_JWT_SECRET,
    BCRYPT_ROUNDS: '4',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ADMIN_API_KEY: OP_ADMIN_KEY,
    ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64'),
    OIDC_RESOURCES: OP_RESOURCE,
  });
  const sent: SentEmail[] = [];
  const mailer = { send: async (email: SentEmail) => void sent.push(email) };
  const server = await startServer(config, { clock, database, logger: createLogger({ level: 'silent' }), mailer });
  const issuer = (): string => server.gatehouse.config.baseUrl;
  const browsers = new Map<string, { browser: TestBrowser; signedIn: boolean }>();

  return {
    server,
    clock,
    database,
    async sentEmails() {
      await server.gatehouse.deliverQueuedEmails();
      return sent;
    },
    issuer,
    async registerPerson() {
      const email = `person-${randomBytes(4).toString('hex')}@example.com`;
      const response = await fetch(`${issuer()}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: issuer() },
        body: JSON.stringify({ email, password: STRONG_PASSWORD }),
      });
      if (response.status !== 201) throw new Error(`registration answered ${response.status}`);
      const row = await sql<{ id: string }>`select id from users where email = ${email}`.execute(database.kysely);
      return { email, id: row.rows[0]!.id };
    },
    async registerClient(body) {
      const response = await fetch(`${issuer()}/api/admin/clients`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OP_ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (response.status !== 201) throw new Error(`client registration answered ${response.status}: ${await response.text()}`);
      const answer = (await response.json()) as { client: { clientId: string }; clientSecret?: string | null };
      return { clientId: answer.client.clientId, clientSecret: answer.clientSecret ?? undefined };
    },
    async authorize(person, url) {
      let entry = browsers.get(person.email);
      if (entry === undefined) {
        entry = { browser: createTestBrowser(issuer()), signedIn: false };
        browsers.set(person.email, entry);
      }
      const { browser } = entry;
      let step = await browser.open(url);
      if (step.url.origin === issuer() && step.url.pathname === '/login') {
        if (!entry.signedIn) await browser.signIn(person.email, STRONG_PASSWORD);
        entry.signedIn = true;
        step = await browser.open(step.url.searchParams.get('return_to')!);
      }
      if (step.url.origin === issuer() && step.url.pathname.startsWith('/consent/') && step.response?.status === 200) {
        step = await browser.open(step.url, { method: 'POST', form: { decision: 'allow' } });
      }
      if (step.url.origin === issuer()) throw new Error(`the browser stopped at ${step.url.pathname} (${step.response?.status})`);
      return step.url;
    },
    async post(path, form, basic) {
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
      if (basic !== undefined) headers.authorization = basicHeader(basic);
      return readAnswer(await fetch(`${issuer()}${path}`, { method: 'POST', headers, body: new URLSearchParams(form).toString() }));
    },
    async stop() {
      await server.stop();
      await drop();
    },
  };
}
