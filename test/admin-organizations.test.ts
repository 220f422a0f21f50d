/**
 * The admin API's organizations over HTTP on every available database: people create and join
 * organizations through /api/orgs, then an operator searches them (by name, slug or id), pages
 * with the opaque cursor, shows one by id or slug with its members, and deletes one (audited with
 * actor admin, gone for its members). The key is checked first; without ADMIN_API_KEY the routes
 * are the plain 404. A user's deletion is refused (409 last_owner) while they are the only owner of
 * an organization with other members.
 */
import { afterEach, expect, test } from 'vitest';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const KEY = 'admin-key-for-tests-0123456789-abcdefghij';
const SESSION = 'gatehouse_session';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON answer, read field by field by the assertions
type Body = any;

interface Person {
  id: string;
  email: string;
  cookie: string;
}

describeEachDialect('admin API: organizations', (dialect) => {
  let t: TestGatehouse;
  afterEach(async () => {
    await t?.close();
  });

  async function open(env: Record<string, string> = { ADMIN_API_KEY: KEY }): Promise<TestGatehouse> {
    t = await createTestGatehouse(dialect, {
      env: { NODE_ENV: 'development', RATE_LIMIT_REGISTER: '1000/15m', RATE_LIMIT_VERIFY_EMAIL: '1000/15m', RATE_LIMIT_ADMIN: '1000/1m', ...env },
    });
    return t;
  }

  async function admin(method: string, path: string, key: string | null = KEY): Promise<{ status: number; body: Body; headers: Headers }> {
    const response = await t.request(method, `/api/admin${path}`, {
      ip: '192.0.2.50',
      headers: { ...(key === null ? {} : { authorization: `Bearer ${key}` }), 'user-agent': 'ops-script/1.0' },
    });
    return { status: response.status, body: await response.json(), headers: response.headers };
  }

  /** Registers and verifies the address (development mode hands the token back, as the email would). */
  async function person(email: string): Promise<Person> {
    const registered = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
    expect(registered.status).toBe(201);
    const { verificationToken } = (await registered.json()) as { verificationToken: string };
    const cookie = cookieFrom(registered, SESSION)!;
    expect((await t.request('POST', '/api/auth/verify-email', { json: { token: verificationToken }, cookie })).status).toBe(200);
    const session = (await (await t.request('GET', '/api/auth/session', { cookie })).json()) as { user: { id: string } };
    return { id: session.user.id, email, cookie };
  }

  async function call(who: Person, method: string, path: string, json?: unknown): Promise<{ status: number; body: Body }> {
    const response = await t.request(method, path, { cookie: who.cookie, ...(json === undefined ? {} : { json }) });
    return { status: response.status, body: await response.json() };
  }

  /** Created a second after the one before, so "oldest first" is the order of creation. */
  async function createOrg(owner: Person, name: string, slug: string): Promise<string> {
    t.clock.advance(1000);
    const created = await call(owner, 'POST', '/api/orgs', { name, slug });
    expect(created.status).toBe(201);
    return created.body.organization.id as string;
  }

  async function join_(organizationId: string, inviter: Person, who: Person, role: string): Promise<void> {
    const invited = await call(inviter, 'POST', `/api/orgs/${organizationId}/invitations`, { email: who.email, role });
    expect(invited.status).toBe(201);
    t.clock.advance(1000);
    expect((await call(who, 'POST', '/api/orgs/invitations/accept', { token: invited.body.token })).status).toBe(200);
  }

  /** Ana owns Acme Corp (Bo is its admin) and Acme Research; Bo owns Beta Labs. */
  async function threeOrganizations() {
    const ana = await person('ana@example.com');
    const bo = await person('bo@example.com');
    const acme = await createOrg(ana, 'Acme Corp', 'acme');
    const beta = await createOrg(bo, 'Beta Labs', 'beta');
    const research = await createOrg(ana, 'Acme Research', 'acme-research');
    await join_(acme, ana, bo, 'admin');
    return { ana, bo, acme, beta, research };
  }

  test('search by name, slug or id, oldest first, with member counts; pages with an opaque cursor', async () => {
    await open();
    const { acme, beta, research } = await threeOrganizations();
    const all = await admin('GET', '/orgs');
    expect(all.status).toBe(200);
    expect(all.headers.get('cache-control')).toBe('no-store');
    expect(all.body).toEqual({
      organizations: [
        { id: acme, name: 'Acme Corp', slug: 'acme', createdAt: expect.any(String), members: 2 },
        { id: beta, name: 'Beta Labs', slug: 'beta', createdAt: expect.any(String), members: 1 },
        { id: research, name: 'Acme Research', slug: 'acme-research', createdAt: expect.any(String), members: 1 },
      ],
      nextCursor: null,
    });
    const slugs = async (query: string) => ((await admin('GET', `/orgs?${query}`)).body.organizations as { slug: string }[]).map((org) => org.slug);
    expect(await slugs('query=ACME')).toEqual(['acme', 'acme-research']);
    expect(await slugs('query=research')).toEqual(['acme-research']);
    expect(await slugs(`query=${beta}`)).toEqual(['beta']);
    expect(await slugs('query=nothing-like-it')).toEqual([]);
    expect(await slugs('query=%25')).toEqual([]);

    const first = await admin('GET', '/orgs?limit=2');
    expect((first.body.organizations as { id: string }[]).map((org) => org.id)).toEqual([acme, beta]);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const rest = await admin('GET', `/orgs?limit=2&cursor=${encodeURIComponent(first.body.nextCursor as string)}`);
    expect(rest.body).toEqual({ organizations: [expect.objectContaining({ id: research })], nextCursor: null });
    // A page that ends exactly at the last one says so: no cursor to an empty page.
    expect((await admin('GET', '/orgs?limit=3')).body.nextCursor).toBeNull();

    for (const query of ['limit=0', 'limit=101', 'limit=two', 'cursor=not-a-cursor', `cursor=${Buffer.from('[1,"x"]').toString('base64url')}`]) {
      const refused = await admin('GET', `/orgs?${query}`);
      expect([refused.status, refused.body.error, query]).toEqual([400, 'validation_error', query]);
    }
    expect((await admin('GET', '/orgs?query=%00')).status).toBe(400);
  });

  test('show by id or slug: the organization and its members with their roles, oldest first; 404 for anything else', async () => {
    await open();
    const { ana, bo, acme } = await threeOrganizations();
    for (const reference of [acme, 'acme', 'ACME']) {
      const shown = await admin('GET', `/orgs/${reference}`);
      expect([shown.status, shown.body]).toEqual([
        200,
        {
          organization: { id: acme, name: 'Acme Corp', slug: 'acme', createdAt: expect.any(String) },
          members: [
            { userId: ana.id, email: 'ana@example.com', role: 'owner', joinedAt: expect.any(String) },
            { userId: bo.id, email: 'bo@example.com', role: 'admin', joinedAt: expect.any(String) },
          ],
        },
      ]);
    }
    for (const reference of ['no-such-org', '00000000-0000-4000-8000-000000000000', 'not%20a%20slug', 'x'.repeat(65)]) {
      const missing = await admin('GET', `/orgs/${reference}`);
      expect([missing.status, missing.body.error, reference]).toEqual([404, 'not_found', reference]);
    }
  });

  test('the key comes first: missing or wrong is 401 admin_unauthorized; without ADMIN_API_KEY the routes are the plain 404', async () => {
    await open();
    const { acme } = await threeOrganizations();
    for (const [method, path] of [
      ['GET', '/orgs'],
      ['GET', `/orgs/${acme}`],
      ['DELETE', `/orgs/${acme}`],
    ] as const) {
      for (const key of [null, 'wrong-key-0123456789-0123456789-0123456789']) {
        const refused = await admin(method, path, key);
        expect([refused.status, refused.body.error]).toEqual([401, 'admin_unauthorized']);
        expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="gatehouse-admin"');
      }
    }
    // Refused with the wrong key: nothing was deleted.
    expect((await admin('GET', `/orgs/${acme}`)).status).toBe(200);
    await t.close();

    await open({});
    const unknown = await t.request('GET', '/api/admin/no-such-route');
    for (const [method, path] of [
      ['GET', '/orgs'],
      ['GET', `/orgs/${acme}`],
      ['DELETE', `/orgs/${acme}`],
    ] as const) {
      const off = await admin(method, path);
      expect([off.status, off.body]).toEqual([unknown.status, expect.objectContaining({ error: 'not_found' })]);
    }
  });

  test('delete by id or slug: gone for its members, audited (org_deleted, actor admin, no user); a second delete is 404', async () => {
    await open();
    const { ana, bo, acme, beta } = await threeOrganizations();
    const deleted = await admin('DELETE', `/orgs/${acme}`);
    expect([deleted.status, deleted.body]).toEqual([200, { deleted: true }]);
    expect((await call(bo, 'GET', '/api/orgs')).body.organizations.map((org: { slug: string }) => org.slug)).toEqual(['beta']);
    expect((await call(ana, 'GET', `/api/orgs/${acme}`)).status).toBe(404);
    expect((await admin('GET', `/orgs/${acme}`)).status).toBe(404);
    const again = await admin('DELETE', `/orgs/${acme}`);
    expect([again.status, again.body.error]).toEqual([404, 'not_found']);

    expect((await admin('DELETE', '/orgs/beta')).body).toEqual({ deleted: true });
    expect((await admin('GET', '/orgs')).body.organizations.map((org: { slug: string }) => org.slug)).toEqual(['acme-research']);

    const audit = await admin('GET', '/audit?type=org_deleted');
    expect(audit.body.events).toEqual([
      expect.objectContaining({
        userId: null,
        ip: '192.0.2.50',
        userAgent: 'ops-script/1.0',
        metadata: { actor: 'admin', organizationId: beta, name: 'Beta Labs', slug: 'beta', members: 1 },
      }),
      expect.objectContaining({
        userId: null,
        metadata: { actor: 'admin', organizationId: acme, name: 'Acme Corp', slug: 'acme', members: 2 },
      }),
    ]);
  });

  test("a user's deletion is 409 last_owner while they are the only owner of an organization with other members", async () => {
    await open();
    const { ana, acme } = await threeOrganizations();
    const refused = await admin('DELETE', `/users/${ana.id}`);
    expect([refused.status, refused.body.error]).toEqual([409, 'last_owner']);
    expect(refused.body.message).toMatch(/only owner/);
    // Nothing of Ana went: her session and her organizations stay.
    expect((await call(ana, 'GET', '/api/orgs')).body.organizations).toHaveLength(2);
    // Once the shared organization is gone, the one she owns alone goes with her.
    expect((await admin('DELETE', `/orgs/${acme}`)).status).toBe(200);
    expect((await admin('DELETE', `/users/${ana.id}`)).body).toEqual({ deleted: true });
    expect((await admin('GET', '/orgs')).body.organizations.map((org: { slug: string }) => org.slug)).toEqual(['beta']);
  });
});
