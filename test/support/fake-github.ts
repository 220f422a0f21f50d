/**
 * A GitHub-compatible OAuth provider on loopback (node:http, port 0): real HTTP, so Gatehouse's
 * own fetch, headers, time bound and parsing are what is tested. It behaves as github.com does
 * (shared github-oauth.md): token errors are HTTP 200 with an `error` field, codes are single
 * use, the PKCE verifier must match the S256 challenge (RFC 7636 §4.6), the REST API wants a
 * Bearer token and a User-Agent. It can also fail (500), answer garbage or hang, once, on demand.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeGitHubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

export interface FakeGitHubUser {
  id: number;
  login: string;
  emails: FakeGitHubEmail[];
}

export type FakeFailure = 'error500' | 'hang' | 'not_json' | 'huge';
type FailurePath = '/login/oauth/access_token' | '/user' | '/user/emails';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface IssuedCode {
  login: string;
  redirectUri: string;
  codeChallenge: string;
  used: boolean;
}

export interface FakeGitHub {
  readonly authUrl: string;
  readonly apiUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly requests: RecordedRequest[];
  /** Every access and refresh token handed out, for scanning the database for them. */
  readonly issuedTokens: string[];
  /** Hand out expiring tokens with refresh tokens, like an app with "expiring tokens" on. */
  expiringTokens: boolean;
  /**
   * The GitHub user "signed in" in the browser: an authorize request without `login` (a real
   * browser following Gatehouse's redirect) is approved as this user, as GitHub would after
   * its consent page.
   */
  defaultLogin: string | null;
  setUser(user: FakeGitHubUser): void;
  /** The next request to `path` fails this way, once. */
  failNext(path: FailurePath, failure: FakeFailure): void;
  /**
   * Plays the browser at GitHub: opens Gatehouse's authorization URL as `login` (or cancels),
   * and returns the callback URL GitHub redirects back to.
   */
  authorize(authorizationUrl: string, as: { login: string } | { deny: true }): Promise<URL>;
  close(): Promise<void>;
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

const token = (prefix: string): string => `${prefix}_${randomBytes(18).toString('base64url')}`;

export async function startFakeGitHub(options: { clientId?: string; clientSecret?: string } = {}): Promise<FakeGitHub> {
  const clientId = options.clientId ?? 'Iv1.fakeclientid';
  const clientSecret = options.clientSecret ?? 'fake-client-secret-0123456789abcdef';
  const users = new Map<string, FakeGitHubUser>();
  const codes = new Map<string, IssuedCode>();
  const accessTokens = new Map<string, string>();
  const failures = new Map<string, FakeFailure>();
  const requests: RecordedRequest[] = [];
  const issuedTokens: string[] = [];

  const json = (response: http.ServerResponse, status: number, body: unknown): void => {
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    response.end(JSON.stringify(body));
  };

  const handle = async (request: http.IncomingMessage, response: http.ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://fake-github');
    const body = await readBody(request);
    requests.push({ method: request.method ?? '', path: url.pathname, headers: request.headers, body });

    const failure = failures.get(url.pathname);
    if (failure !== undefined) {
      failures.delete(url.pathname);
      if (failure === 'hang') return; // never answers; close() drops the socket
      if (failure === 'error500') return json(response, 500, { message: 'Server Error' });
      if (failure === 'huge') {
        // 4 MiB of JSON-looking text in chunks, without a Content-Length: only a reader that
        // counts as it goes can stop it.
        response.writeHead(200, { 'content-type': 'application/json' });
        const chunk = `[${'"x",'.repeat(16 * 1024)}`;
        for (let sent = 0; sent < 4 * 1024 * 1024; sent += chunk.length) response.write(chunk);
        response.end('"x"]');
        return;
      }
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>unicorn</html>');
      return;
    }

    if (request.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const q = url.searchParams;
      const redirectUri = q.get('redirect_uri');
      // GitHub shows an error page, not a redirect, for a request it cannot trust.
      if (q.get('client_id') !== clientId || !redirectUri) return json(response, 400, { message: 'unknown client or no redirect_uri' });
      if (q.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(q.get('code_challenge') ?? '')) {
        return json(response, 400, { message: 'PKCE: S256 with a 43-character challenge required' });
      }
      const back = new URL(redirectUri);
      const state = q.get('state');
      if (q.get('deny') === '1') {
        back.searchParams.set('error', 'access_denied');
        back.searchParams.set('error_description', 'The user has denied your application access.');
        back.searchParams.set('error_uri', 'https://docs.github.com/apps/troubleshooting-authorization-request-errors/#access-denied');
      } else {
        const login = q.get('login') ?? fake.defaultLogin ?? '';
        if (!users.has(login)) return json(response, 400, { message: `no such user ${login}` });
        const code = randomBytes(10).toString('hex');
        codes.set(code, { login, redirectUri, codeChallenge: q.get('code_challenge')!, used: false });
        back.searchParams.set('code', code);
      }
      if (state !== null) back.searchParams.set('state', state);
      response.writeHead(302, { location: back.toString() });
      response.end();
      return;
    }

    if (request.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const form = new URLSearchParams(body);
      // GitHub answers every token error with HTTP 200 (github-oauth.md §3).
      const refuse = (error: string, description: string) =>
        json(response, 200, { error, error_description: description, error_uri: 'https://docs.github.com/apps/oauth' });
      if (request.headers.accept !== 'application/json') {
        response.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded' });
        response.end('error=not_json_requested');
        return;
      }
      if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) {
        return refuse('incorrect_client_credentials', 'The client_id and/or client_secret passed are incorrect.');
      }
      const issued = codes.get(form.get('code') ?? '');
      if (issued === undefined || issued.used) return refuse('bad_verification_code', 'The code passed is incorrect or expired.');
      issued.used = true; // single use, even when the rest of the request is wrong
      if (form.get('redirect_uri') !== issued.redirectUri) {
        return refuse('redirect_uri_mismatch', 'The redirect_uri MUST match the registered callback URL for this application.');
      }
      const verifier = form.get('code_verifier') ?? '';
      // RFC 7636 §4.6: BASE64URL-ENCODE(SHA256(ASCII(code_verifier))) == code_challenge.
      if (createHash('sha256').update(verifier, 'ascii').digest('base64url') !== issued.codeChallenge) {
        return refuse('bad_verification_code', 'The code_verifier does not match the code_challenge.');
      }
      const accessToken = token('gho');
      accessTokens.set(accessToken, issued.login);
      issuedTokens.push(accessToken);
      const answer: Record<string, unknown> = { access_token: accessToken, token_type: 'bearer', scope: 'read:user,user:email' };
      if (fake.expiringTokens) {
        const refreshToken = token('ghr');
        issuedTokens.push(refreshToken);
        Object.assign(answer, { expires_in: 28800, refresh_token: refreshToken, refresh_token_expires_in: 15897600 });
      }
      return json(response, 200, answer);
    }

    if (request.method === 'GET' && (url.pathname === '/user' || url.pathname === '/user/emails')) {
      if (!request.headers['user-agent'])
        return json(response, 403, { message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header' });
      const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
      const login = bearer === undefined ? undefined : accessTokens.get(bearer);
      const user = login === undefined ? undefined : users.get(login);
      if (user === undefined) return json(response, 401, { message: 'Bad credentials' });
      if (url.pathname === '/user') return json(response, 200, { id: user.id, login: user.login, name: null, email: null, type: 'User' });
      return json(
        response,
        200,
        user.emails.map((e) => ({ ...e, visibility: e.primary ? 'private' : null })),
      );
    }

    json(response, 404, { message: 'Not Found' });
  };
  // A fault in the fake itself answers 500, so the test sees it instead of a hung request.
  const server = http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) json(response, 500, { message: `fake GitHub failed: ${String(error)}` });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const fake: FakeGitHub = {
    authUrl: `${origin}/login/oauth`,
    apiUrl: origin,
    clientId,
    clientSecret,
    requests,
    issuedTokens,
    expiringTokens: false,
    defaultLogin: null,
    setUser(user) {
      for (const [login, existing] of users) if (existing.id === user.id) users.delete(login);
      users.set(user.login, user);
      // Tokens follow the account, not its (changeable) login.
      for (const [t, login] of accessTokens) if (login !== user.login && !users.has(login)) accessTokens.set(t, user.login);
    },
    failNext(path, failure) {
      failures.set(path, failure);
    },
    async authorize(authorizationUrl, as) {
      const url = new URL(authorizationUrl);
      if ('deny' in as) url.searchParams.set('deny', '1');
      else url.searchParams.set('login', as.login);
      const response = await fetch(url, { redirect: 'manual' });
      const location = response.headers.get('location');
      if (response.status !== 302 || location === null) throw new Error(`fake GitHub refused to authorize: ${response.status} ${await response.text()}`);
      return new URL(location);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
