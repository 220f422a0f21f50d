/** The pages over HTTP, in-process: headers, escaping, redirects, and that GET spends no token. */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { PAGE_CONTENT_SECURITY_POLICY, PAGE_PATHS } from '../src/web/routes.js';
import { escapeHtml } from '../src/escape-html.js';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const GITHUB_ENV = {
  GITHUB_CLIENT_ID: 'test-client-id',
  GITHUB_CLIENT_SECRET: 'test-client-secret',
  AUTH_SECRET: 'test-auth-secret-0123456789',
  ENCRYPTION_KEY_BASE64: Buffer.alloc(32, 7).toString('base64'),
};

/** Pages that render without a session or a token. */
const PUBLIC_PAGES = ['/login', '/register', '/forgot-password', '/reset-password?token=a.b', '/verify-email?token=a.b'];

function expectPageHeaders(response: Response): void {
  expect(response.headers.get('content-security-policy')).toBe(PAGE_CONTENT_SECURITY_POLICY);
  expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  expect(response.headers.get('x-frame-options')).toBe('DENY');
  expect(response.headers.get('cache-control')).toBe('no-store');
}

function expectNoInlineCode(page: string): void {
  // Same-origin files only (app.js; the login page's passkey scripts too), never inline code.
  // The one exception: the scripts' messages as a JSON data block, which is never run.
  for (const tag of page.match(/<script\b[^>]*>/g) ?? []) {
    if (tag === '<script type="application/json" id="page-messages">') continue;
    expect(tag).toMatch(/\ssrc="\/assets\/(app|webauthn|passkeys)\.js"/);
  }
  expect(page).not.toMatch(/<style\b/i);
  expect(page).not.toMatch(/\sstyle=/i);
  expect(page).not.toMatch(/\son[a-z]+=/i);
  expect(page).not.toMatch(/javascript:/i);
}

/** Every visible input has a <label for> naming it. */
function expectLabelledInputs(page: string): void {
  const inputs = [...page.matchAll(/<input\b[^>]*>/g)].map((m) => m[0]).filter((tag) => !/type="hidden"/.test(tag));
  for (const tag of inputs) {
    const id = /\sid="([^"]+)"/.exec(tag)?.[1];
    expect(id, tag).toBeDefined();
    expect(page, `label for ${id}`).toContain(`<label for="${id}">`);
  }
}

async function registerUser(t: TestGatehouse, email: string): Promise<{ cookie: string; verificationToken: string }> {
  const response = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
  expect(response.status).toBe(201);
  const body = (await response.json()) as { verificationToken: string };
  return { cookie: cookieFrom(response, 'gatehouse_session')!, verificationToken: body.verificationToken };
}

describe('escapeHtml()', () => {
  test('escapes the five characters that can change the meaning of markup', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});

describeEachDialect('pages', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: { NODE_ENV: 'development' } });
  });
  afterEach(async () => {
    await t.close();
  });

  test('return_to on /login and /register never sends the browser to another host (dot segments included)', async () => {
    const attacks = [
      '/.//evil.example',
      '/..//evil.example',
      '/%2e//evil.example',
      '/./%2e//evil.example',
      '//evil.example',
      '/\\evil.example',
      'https://evil.example/x',
      '/\t/evil.example',
    ];
    for (const page of ['/login', '/register']) {
      for (const attack of attacks) {
        const text = await (await t.request('GET', `${page}?return_to=${encodeURIComponent(attack)}`)).text();
        const returnTo = /data-return-to="([^"]*)"/.exec(text)?.[1]?.replace(/&amp;/g, '&') ?? '';
        // What app.js hands to location.assign(), resolved as a browser would from the page.
        expect(new URL(returnTo, `http://localhost:3000${page}`).origin, `${page} ${attack} -> ${returnTo}`).toBe('http://localhost:3000');
        expect(returnTo.startsWith('//'), `${page} ${attack} -> ${returnTo}`).toBe(false);
      }
      const kept = await (await t.request('GET', `${page}?return_to=${encodeURIComponent('/settings?tab=1')}`)).text();
      expect(kept).toContain('data-return-to="/settings?tab=1"');
    }
  });

  test('every page answers HTML in English with a title, a viewport, the page headers, no inline code and a label for each input', async () => {
    const { cookie } = await registerUser(t, 'headers@example.com');
    for (const path of [...PUBLIC_PAGES, '/dashboard']) {
      const response = await t.request('GET', path, { cookie });
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expectPageHeaders(response);
      const page = await response.text();
      expect(page).toMatch(/^<!doctype html>\n<html lang="en" dir="ltr">/);
      expect(page).toMatch(/<title>[^<]+ · Gatehouse<\/title>/);
      expect(page).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
      expect(page).toMatch(/<div id="message" class="message[^"]*" role="alert"/);
      expectNoInlineCode(page);
      expectLabelledInputs(page);
    }
  });

  test('the login page shows only our own sentence for error; message from the query is never shown', async () => {
    const planted = 'Your account is suspended. Call +1 555 0100 now.';
    const response = await t.request('GET', `/login?error=oauth_failed&message=${encodeURIComponent(`<img src=x onerror=alert(1)> ${planted}`)}`);
    const page = await response.text();
    expect(page).toContain('We could not finish signing you in with GitHub. Please try again.<');
    expect(page).not.toContain('<img');
    expect(page).not.toContain('suspended');
    expect(await (await t.request('GET', `/login?message=${encodeURIComponent(planted)}`)).text()).not.toContain('suspended');

    const unknown = await (await t.request('GET', `/login?error=${encodeURIComponent('<b>x</b>')}`)).text();
    expect(unknown).toContain('Signing in did not work. Please try again.');
    expect(unknown).not.toContain('<b>x</b>');

    const long = await (await t.request('GET', `/login?error=oauth_error&message=${'y'.repeat(1000)}`)).text();
    expect(long).not.toContain('yyy');
  });

  test('return_to is kept only as a same-origin path; the GitHub link appears only when the provider is configured', async () => {
    const evil = await (await t.request('GET', '/login?return_to=%2F%2Fevil.example%2F')).text();
    expect(evil).toContain('data-return-to="/dashboard"');
    expect(evil).not.toContain('evil.example');
    expect(evil).not.toContain('Sign in with GitHub');

    const configured = await createTestGatehouse(dialect, { env: { NODE_ENV: 'development', ...GITHUB_ENV } });
    try {
      const page = await (await configured.request('GET', '/login?return_to=%2Fsettings%3Ftab%3D1')).text();
      expect(page).toContain('data-return-to="/settings?tab=1"');
      expect(page).toContain('href="/api/auth/oauth/github?return_to=%2Fsettings%3Ftab%3D1">Sign in with GitHub</a>');
    } finally {
      await configured.close();
    }
  });

  test('GET /dashboard without a valid session redirects to the login page, and never caches', async () => {
    for (const cookie of [undefined, 'gatehouse_session=not-a-jwt']) {
      const response = await t.request('GET', '/dashboard', cookie ? { cookie } : {});
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe('/login?return_to=%2Fdashboard');
      expect(response.headers.get('cache-control')).toBe('no-store');
    }
  });

  test('GET /dashboard shows who is signed in and whether the email is verified; a revoked session is sent to sign in', async () => {
    const { cookie, verificationToken } = await registerUser(t, 'dash@example.com');
    const before = await (await t.request('GET', '/dashboard', { cookie })).text();
    expect(before).toContain('<dd id="account-email" dir="auto">dash@example.com</dd>');
    expect(before).toContain('<span id="verification-status" class="status status--unverified">Not verified yet</span>');
    expect(before).toContain('data-api="/api/auth/resend-verification"');

    expect((await t.request('POST', '/api/auth/verify-email', { cookie, json: { token: verificationToken } })).status).toBe(200);
    const after = await (await t.request('GET', '/dashboard', { cookie })).text();
    expect(after).toContain('<span id="verification-status" class="status status--verified">Verified</span>');
    expect(after).not.toContain('resend-verification');

    expect((await t.request('POST', '/api/auth/logout', { json: {}, cookie })).status).toBe(200);
    expect((await t.request('GET', '/dashboard', { cookie })).status).toBe(302);
  });

  test('GET /verify-email?token= only shows a Confirm form: fetching the link spends nothing', async () => {
    const { cookie, verificationToken } = await registerUser(t, 'scanner@example.com');
    for (let i = 0; i < 3; i++) {
      const page = await (await t.request('GET', `/verify-email?token=${encodeURIComponent(verificationToken)}`)).text();
      expect(page).toContain(`<input type="hidden" name="token" value="${verificationToken}">`);
      expect(page).toContain('>Confirm</button>');
    }
    const session = (await (await t.request('GET', '/api/auth/session', { cookie })).json()) as { user: { emailVerified: boolean } };
    expect(session.user.emailVerified).toBe(false);
    expect((await t.request('POST', '/api/auth/verify-email', { json: { token: verificationToken } })).status).toBe(200);
  });

  test('a token from the URL is escaped into the form; a missing token says the link is incomplete', async () => {
    const hostile = '"><script>alert(1)</script>';
    for (const path of ['/verify-email', '/reset-password']) {
      const page = await (await t.request('GET', `${path}?token=${encodeURIComponent(hostile)}`)).text();
      expect(page).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
      expect(page).not.toContain('<script>alert');
      const missing = await (await t.request('GET', path)).text();
      expect(missing).toContain('This link is incomplete');
      expect(missing).not.toContain('name="token"');
    }
  });

  test('development mode has a place for the dev link on register, forgot-password and the dashboard; other modes do not', async () => {
    const { cookie } = await registerUser(t, 'devlink@example.com');
    for (const path of ['/register', '/forgot-password', '/dashboard']) {
      const page = await (await t.request('GET', path, { cookie })).text();
      expect(page, path).toContain('id="dev-link"');
      expect(page).toContain('data-dev-mode="true"');
    }
    const plain = await createTestGatehouse(dialect);
    try {
      for (const path of ['/register', '/forgot-password']) {
        const page = await (await plain.request('GET', path)).text();
        expect(page, path).not.toContain('id="dev-link"');
        expect(page).toContain('data-dev-mode="false"');
      }
    } finally {
      await plain.close();
    }
  });

  test('the register and reset pages list the password rules next to a new-password field', async () => {
    for (const path of ['/register', '/reset-password?token=a.b']) {
      const page = await (await t.request('GET', path)).text();
      expect(page).toContain('autocomplete="new-password"');
      // The rules, and the server's reason beside the field when it refuses a common password.
      expect(page).toContain('aria-describedby="password-problem password-rules"');
      expect(page).toContain('<p id="password-problem" class="field-problem" data-password-problem="password" hidden></p>');
      for (const rule of ['length', 'upper', 'lower', 'digit', 'special']) expect(page).toContain(`data-rule="${rule}"`);
      expect(page).toContain('8 to 128 characters');
    }
    const login = await (await t.request('GET', '/login')).text();
    expect(login).toContain('autocomplete="current-password"');
    // One email field for every way in: the email link and its code send the password form's address.
    expect(login.match(/type="email"/g)).toHaveLength(1);
    expect(login).toContain('autocomplete="username webauthn"');
    expect(login).toContain('data-email-from="email"');
  });

  test('the script and the stylesheet are served from this origin with their types, nosniff and an ETag', async () => {
    for (const [path, type] of [
      ['/assets/app.js', 'text/javascript'],
      ['/assets/app.css', 'text/css'],
    ] as const) {
      const response = await t.request('GET', path);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(new RegExp(`^${type}`));
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      const etag = response.headers.get('etag')!;
      expect((await response.text()).length).toBeGreaterThan(500);
      const again = await t.request('GET', path, { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
    }
  });

  test('a form posted without JavaScript gets a page that says so, not a JSON 404', async () => {
    for (const path of PAGE_PATHS) {
      const response = await t.request('POST', path, { body: 'email=a%40b.c', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(response.status, path).toBe(400);
      expectPageHeaders(response);
      expect(await response.text()).toContain('This form is sent by JavaScript');
    }
  });

  test('the API keeps its own headers and JSON 404s', async () => {
    const response = await t.request('GET', '/api/auth/nothing');
    expect(response.status).toBe(404);
    expect(response.headers.get('content-security-policy')).not.toBe(PAGE_CONTENT_SECURITY_POLICY);
    expect((await t.request('GET', '/')).headers.get('location')).toBe('/dashboard');
  });
});
