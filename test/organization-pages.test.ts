/**
 * The organization pages over HTTP, on every available database: /accept-invitation reads its
 * invitation without spending it (however often it is opened) and says what to do for each reader;
 * /organizations/:id is for members only (the 404 page for anyone else) and sends a visitor
 * without a session to sign in and back; /account has its Organizations section.
 */
import { afterEach, beforeEach, expect, test } from 'vitest';
import { PAGE_CONTENT_SECURITY_POLICY } from '../src/web/routes.js';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

interface Person {
  id: string;
  email: string;
  cookie: string;
}

function expectTokenPageHeaders(response: Response): void {
  expect(response.headers.get('content-security-policy')).toBe(PAGE_CONTENT_SECURITY_POLICY);
  expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  expect(response.headers.get('cache-control')).toBe('no-store');
}

describeEachDialect('the organization pages', (dialect) => {
  let t: TestGatehouse;
  let owner: Person;
  let organizationId: string;

  /** Registers (development mode hands back the verification token) and verifies the address unless told not to. */
  async function person(email: string, options: { verify?: boolean } = {}): Promise<Person> {
    const registered = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
    expect(registered.status).toBe(201);
    const { verificationToken } = (await registered.json()) as { verificationToken: string };
    const cookie = cookieFrom(registered, 'gatehouse_session')!;
    if (options.verify !== false) expect((await t.request('POST', '/api/auth/verify-email', { json: { token: verificationToken }, cookie })).status).toBe(200);
    const { user } = (await (await t.request('GET', '/api/auth/session', { cookie })).json()) as { user: { id: string } };
    return { id: user.id, email, cookie };
  }

  async function invite(email: string, role = 'member'): Promise<string> {
    const invited = await t.request('POST', `/api/orgs/${organizationId}/invitations`, { cookie: owner.cookie, json: { email, role } });
    expect(invited.status).toBe(201);
    return ((await invited.json()) as { token: string }).token;
  }

  async function pageOf(path: string, cookie?: string): Promise<{ response: Response; text: string }> {
    const response = await t.request('GET', path, { ...(cookie === undefined ? {} : { cookie }), headers: { accept: 'text/html' } });
    return { response, text: await response.text() };
  }

  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: { NODE_ENV: 'development', RATE_LIMIT_REGISTER: '100/15m' } });
    owner = await person('owner@example.com');
    const created = await t.request('POST', '/api/orgs', { cookie: owner.cookie, json: { name: 'Acme <Corp>' } });
    expect(created.status).toBe(201);
    organizationId = ((await created.json()) as { organization: { id: string } }).organization.id;
  });
  afterEach(async () => {
    await t.close();
  });

  test('GET /accept-invitation spends nothing, however often it is opened; the API accept still works after', async () => {
    const invitee = await person('new@example.com');
    const token = await invite(invitee.email, 'admin');
    const path = `/accept-invitation?token=${encodeURIComponent(token)}`;
    for (const cookie of [undefined, invitee.cookie, owner.cookie, invitee.cookie]) {
      const { response, text } = await pageOf(path, cookie);
      expect(response.status).toBe(200);
      expectTokenPageHeaders(response);
      // The organization's name is escaped; the role is in words.
      expect(text).toContain('You are invited to join <strong>Acme &lt;Corp&gt;</strong> as <strong>Admin</strong>.');
      expect(text).toContain('<script src="/assets/organizations.js" defer></script>');
    }
    // Still pending: the owner sees it, and the invitee is no member yet.
    const pending = (await (await t.request('GET', `/api/orgs/${organizationId}/invitations`, { cookie: owner.cookie })).json()) as { invitations: unknown[] };
    expect(pending.invitations).toHaveLength(1);
    expect((await t.request('GET', `/api/orgs/${organizationId}`, { cookie: invitee.cookie })).status).toBe(404);
    const accepted = await t.request('POST', '/api/orgs/invitations/accept', { cookie: invitee.cookie, json: { token } });
    expect(accepted.status).toBe(200);
    expect(((await accepted.json()) as { role: string }).role).toBe('admin');
    // Spent now: the page says so.
    const { text } = await pageOf(path, invitee.cookie);
    expect(text).toContain('This invitation is invalid, expired or already used.');
    expect(text).not.toContain('accept-form');
  });

  test('without a session: sign in or register with the invited address, and come back here', async () => {
    const token = await invite('someone@example.com');
    const path = `/accept-invitation?token=${encodeURIComponent(token)}`;
    const { text } = await pageOf(path);
    const back = `return_to=${encodeURIComponent(path)}&amp;login_hint=someone%40example.com`;
    expect(text).toContain(`<a id="invitation-sign-in" class="button primary" href="/login?${back}">Sign in</a>`);
    expect(text).toContain(`<a id="invitation-register" class="button secondary" href="/register?${back}">Create an account</a>`);
    expect(text).not.toContain('accept-form');
    // /login and /register keep that return address (a path with its query is allowed) and fill in the address.
    for (const target of ['/login', '/register']) {
      const page = await (await t.request('GET', `${target}?return_to=${encodeURIComponent(path)}&login_hint=someone%40example.com`)).text();
      expect(page).toContain(`data-return-to="${path}"`);
      expect(page).toContain('value="someone@example.com"');
    }
    // Each links to the other with both, for someone who chose the wrong one.
    const login = await (await t.request('GET', `/login?return_to=${encodeURIComponent(path)}&login_hint=someone%40example.com`)).text();
    expect(login).toContain(`<a href="/register?${back}">`);
  });

  test('with the invited account: an Accept form (unverified: told to confirm first); with another: an offer to switch', async () => {
    const unverified = await person('late@example.com', { verify: false });
    const token = await invite(unverified.email);
    const path = `/accept-invitation?token=${encodeURIComponent(token)}`;
    const mine = (await pageOf(path, unverified.cookie)).text;
    expect(mine).toContain('data-org-api="/api/orgs/invitations/accept"');
    expect(mine).toContain(`<input type="hidden" name="token" value="${token}">`);
    expect(mine).toContain('is not confirmed yet');
    const other = (await pageOf(path, owner.cookie)).text;
    expect(other).toContain('This invitation is for <strong>late@example.com</strong>, but you are signed in as <strong>owner@example.com</strong>.');
    expect(other).toContain('id="invitation-switch-form"');
    expect(other).toContain(`data-next="/login?return_to=${encodeURIComponent(path)}&amp;login_hint=late%40example.com"`);
    expect(other).not.toContain('accept-form');
  });

  test('an invalid, unknown or missing token shows a clear message and no form', async () => {
    const token = await invite('x@example.com');
    const [id] = token.split('.');
    for (const bad of ['nonsense', `${id}.${'A'.repeat(43)}`, 'AAAAAAAAAAAAAAAAAAAAAA.BBBB']) {
      const { response, text } = await pageOf(`/accept-invitation?token=${encodeURIComponent(bad)}`);
      expect(response.status).toBe(200);
      expectTokenPageHeaders(response);
      expect(text).toContain('This invitation is invalid, expired or already used. Ask the person who invited you for a new one.');
      expect(text).not.toContain('<form');
    }
    // Expired: seven days later.
    t.clock.advance(7 * 24 * 60 * 60 * 1000 + 1000);
    expect((await pageOf(`/accept-invitation?token=${encodeURIComponent(token)}`)).text).toContain('This invitation is invalid, expired');
    expect((await pageOf('/accept-invitation')).text).toContain('This link is incomplete');
  });

  test('/organizations/:id: members see it, anyone else and a missing id get the 404 page; no session: to sign in and back', async () => {
    const { response, text } = await pageOf(`/organizations/${organizationId}`, owner.cookie);
    expect(response.status).toBe(200);
    expectTokenPageHeaders(response);
    expect(text).toContain('<h1>Acme &lt;Corp&gt;</h1>');
    for (const id of ['member-list', 'invitation-list', 'invite-form', 'rename-form', 'org-delete-form']) expect(text).toContain(`id="${id}"`);
    expect(text).toContain('<option value="owner">Owner</option>');
    expect(text).not.toMatch(/<script>|\sstyle="|\son[a-z]+="/);

    const stranger = await person('stranger@example.com');
    for (const id of [organizationId, '00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      const missing = await pageOf(`/organizations/${id}`, stranger.cookie);
      expect(missing.response.status).toBe(404);
      expect(missing.text).toContain('Page not found');
      expect(missing.text).not.toContain('Acme');
    }

    for (const cookie of [undefined, 'gatehouse_session=forged']) {
      const redirected = await t.request('GET', `/organizations/${organizationId}`, cookie === undefined ? {} : { cookie });
      expect(redirected.status).toBe(302);
      expect(redirected.headers.get('location')).toBe(`/login?return_to=${encodeURIComponent(`/organizations/${organizationId}`)}`);
    }
  });

  test('a plain member sees the members, and no invitation, rename or delete controls', async () => {
    const member = await person('member@example.com');
    const token = await invite(member.email);
    expect((await t.request('POST', '/api/orgs/invitations/accept', { cookie: member.cookie, json: { token } })).status).toBe(200);
    const { response, text } = await pageOf(`/organizations/${organizationId}`, member.cookie);
    expect(response.status).toBe(200);
    expect(text).toContain('id="member-list"');
    expect(text).toContain('data-role="member"');
    for (const id of ['invitation-list', 'invite-form', 'rename-form', 'org-delete-form']) expect(text).not.toContain(`id="${id}"`);
  });

  test('/account has the Organizations section with its create form', async () => {
    const { text } = await pageOf('/account', owner.cookie);
    expect(text).toContain(`<section class="section" id="organizations" aria-labelledby="orgs-title" data-user-id="${owner.id}">`);
    expect(text).toContain('data-org-api="/api/orgs"');
    expect(text).toContain('<script src="/assets/organizations.js" defer></script>');
    const script = await t.request('GET', '/assets/organizations.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  });
});
