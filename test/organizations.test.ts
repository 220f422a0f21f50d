/**
 * Organizations over HTTP on every available database: several people with different roles
 * create, read, rename and delete organizations, change roles, remove members and leave, invite
 * and accept; `last_owner` everywhere it can happen (with concurrent demotions on PostgreSQL);
 * invitations expire by moving the clock, work once and are bound to the invited address; the
 * audit rows and webhook events each change writes; the limits on invitations; ORG_ROLES_FILE.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { STRONG_PASSWORD, TEST_JWT_SECRET, cookieFrom, createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const COOKIE = 'gatehouse_session';
const DAY_MS = 24 * 60 * 60 * 1000;

function rolesFile(content: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'gatehouse-roles-')), 'roles.json');
  writeFileSync(file, content);
  return file;
}

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'development',
    ORG_ROLES_FILE: rolesFile(JSON.stringify({ billing: ['invoices:read', 'invoices:pay'], viewer: [] })),
    RATE_LIMIT_REGISTER: '1000/15m',
    RATE_LIMIT_LOGIN: '1000/15m',
    RATE_LIMIT_VERIFY_EMAIL: '1000/15m',
    ...extra,
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON answer, read field by field by the assertions
type Body = any;

interface Person {
  id: string;
  email: string;
  cookie: string;
}

describeEachDialect('organizations', (dialect) => {
  let t: TestGatehouse;
  afterEach(async () => {
    await t?.close();
  });

  async function open(extra: Record<string, string> = {}): Promise<TestGatehouse> {
    t = await createTestGatehouse(dialect, { env: env(extra) });
    return t;
  }

  /** Registers and verifies the address (development mode hands the token back, as the email would). */
  async function person(email: string, options: { verify?: boolean } = {}): Promise<Person> {
    const registered = await t.request('POST', '/api/auth/register', { json: { email, password: STRONG_PASSWORD } });
    expect(registered.status).toBe(201);
    const body = (await registered.json()) as { verificationToken: string };
    const cookie = cookieFrom(registered, COOKIE)!;
    const session = (await (await t.request('GET', '/api/auth/session', { cookie })).json()) as { user: { id: string } };
    if (options.verify !== false) {
      expect((await t.request('POST', '/api/auth/verify-email', { json: { token: body.verificationToken }, cookie })).status).toBe(200);
    }
    return { id: session.user.id, email, cookie };
  }

  async function call(who: Person, method: string, path: string, json?: unknown): Promise<{ status: number; body: Body }> {
    const response = await t.request(method, path, { cookie: who.cookie, ...(json === undefined ? {} : { json }) });
    return { status: response.status, body: await response.json() };
  }

  async function createOrg(owner: Person, name = 'Acme Corp', slug?: string): Promise<string> {
    const created = await call(owner, 'POST', '/api/orgs', { name, ...(slug === undefined ? {} : { slug }) });
    expect(created.status).toBe(201);
    return created.body.organization.id as string;
  }

  /** Invites and accepts: `who` joins with `role`. */
  async function join_(organizationId: string, inviter: Person, who: Person, role: string): Promise<void> {
    const invited = await call(inviter, 'POST', `/api/orgs/${organizationId}/invitations`, { email: who.email, role });
    expect(invited.status).toBe(201);
    // Members are listed oldest first: one joins a second after the other.
    t.clock.advance(1000);
    const accepted = await call(who, 'POST', '/api/orgs/invitations/accept', { token: invited.body.token });
    expect(accepted.status).toBe(200);
  }

  async function auditRows(type: string): Promise<{ user_id: string | null; metadata: Record<string, unknown> }[]> {
    const rows = await t.database.kysely.selectFrom('audit_events').select(['user_id', 'metadata']).where('event_type', '=', type).orderBy('id').execute();
    return rows.map((row) => ({ user_id: row.user_id, metadata: JSON.parse(row.metadata) as Record<string, unknown> }));
  }

  test('create, list with role and permissions, read; outsiders get 404; slugs derived, unique, validated', async () => {
    await open();
    const ana = await person('ana@example.com');
    const bob = await person('bob@example.com');
    const created = await call(ana, 'POST', '/api/orgs', { name: 'Ünïcode Ltd.' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ organization: { name: 'Ünïcode Ltd.', slug: 'unicode-ltd' }, role: 'owner' });
    const id = created.body.organization.id as string;
    // The same name again: a suffix. A slug given and taken: 409. Outside [a-z0-9-]: 400.
    expect((await call(bob, 'POST', '/api/orgs', { name: 'Unicode Ltd' })).body.organization.slug).toBe('unicode-ltd-2');
    expect(await call(bob, 'POST', '/api/orgs', { name: 'Other', slug: 'unicode-ltd' })).toMatchObject({ status: 409, body: { error: 'slug_taken' } });
    expect(await call(bob, 'POST', '/api/orgs', { name: 'Other', slug: 'Has Space' })).toMatchObject({ status: 400, body: { error: 'validation_error' } });
    expect(await call(bob, 'POST', '/api/orgs', { name: '' })).toMatchObject({ status: 400, body: { error: 'validation_error' } });

    expect((await call(ana, 'GET', '/api/orgs')).body).toEqual({
      organizations: [{ id, name: 'Ünïcode Ltd.', slug: 'unicode-ltd', role: 'owner', permissions: [] }],
    });
    expect((await call(ana, 'GET', `/api/orgs/${id}`)).body).toMatchObject({ organization: { id, slug: 'unicode-ltd' }, role: 'owner', permissions: [] });
    // Bob is not a member: the same 404 as an organization that does not exist.
    for (const path of [`/api/orgs/${id}`, `/api/orgs/${randomUUID()}`, '/api/orgs/not-a-uuid', `/api/orgs/${id}/members`, `/api/orgs/${id}/invitations`]) {
      expect(await call(bob, 'GET', path)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    }
    expect((await t.request('GET', '/api/orgs')).status).toBe(401);
    const audit = await auditRows('org_created');
    expect(audit[0]).toMatchObject({ user_id: ana.id, metadata: { organizationId: id, slug: 'unicode-ltd' } });
  });

  test('roles: admins rename and manage members, never owners; members read only; custom roles carry their permissions', async () => {
    await open();
    const owner = await person('o@example.com');
    const admin = await person('a@example.com');
    const member = await person('m@example.com');
    const biller = await person('b@example.com');
    const id = await createOrg(owner);
    await join_(id, owner, admin, 'admin');
    await join_(id, admin, member, 'member');
    await join_(id, admin, biller, 'billing');

    expect((await call(biller, 'GET', '/api/orgs')).body.organizations[0]).toMatchObject({ role: 'billing', permissions: ['invoices:read', 'invoices:pay'] });
    const members = (await call(member, 'GET', `/api/orgs/${id}/members`)).body.members as { userId: string; email: string; role: string }[];
    expect(members.map((m) => [m.email, m.role])).toEqual([
      ['o@example.com', 'owner'],
      ['a@example.com', 'admin'],
      ['m@example.com', 'member'],
      ['b@example.com', 'billing'],
    ]);

    // Members: read, but not invitations, renames, role changes or removals.
    expect(await call(member, 'GET', `/api/orgs/${id}/invitations`)).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect(await call(member, 'PATCH', `/api/orgs/${id}`, { name: 'Mine' })).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect(await call(member, 'PATCH', `/api/orgs/${id}/members/${biller.id}`, { role: 'member' })).toMatchObject({ status: 403 });
    expect(await call(member, 'DELETE', `/api/orgs/${id}/members/${biller.id}`)).toMatchObject({ status: 403 });
    expect(await call(member, 'POST', `/api/orgs/${id}/invitations`, { email: 'x@example.com', role: 'member' })).toMatchObject({ status: 403 });

    // Admins: rename, change members and admins, remove; never make, unmake, invite or remove an owner.
    expect(await call(admin, 'PATCH', `/api/orgs/${id}`, { name: 'Acme Inc', slug: 'acme' })).toMatchObject({
      status: 200,
      body: { organization: { name: 'Acme Inc', slug: 'acme' } },
    });
    expect(await call(admin, 'PATCH', `/api/orgs/${id}/members/${member.id}`, { role: 'viewer' })).toMatchObject({
      status: 200,
      body: { member: { role: 'viewer' } },
    });
    expect(await call(admin, 'PATCH', `/api/orgs/${id}/members/${member.id}`, { role: 'owner' })).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect(await call(admin, 'PATCH', `/api/orgs/${id}/members/${owner.id}`, { role: 'member' })).toMatchObject({ status: 403 });
    expect(await call(admin, 'DELETE', `/api/orgs/${id}/members/${owner.id}`)).toMatchObject({ status: 403 });
    expect(await call(admin, 'POST', `/api/orgs/${id}/invitations`, { email: 'x@example.com', role: 'owner' })).toMatchObject({ status: 403 });
    // An owner's invitation: the admin may neither revoke it nor replace it with a lesser one.
    const ownerInvite = await call(owner, 'POST', `/api/orgs/${id}/invitations`, { email: 'next-owner@example.com', role: 'owner' });
    expect(await call(admin, 'DELETE', `/api/orgs/${id}/invitations/${ownerInvite.body.invitation.id}`)).toMatchObject({ status: 403 });
    expect(await call(admin, 'POST', `/api/orgs/${id}/invitations`, { email: 'next-owner@example.com', role: 'member' })).toMatchObject({ status: 403 });
    expect((await call(owner, 'GET', `/api/orgs/${id}/invitations`)).body.invitations).toMatchObject([{ email: 'next-owner@example.com', role: 'owner' }]);
    // Renames: a slug taken or malformed is refused.
    const other = await createOrg(member, 'Other', 'taken-slug');
    expect(await call(admin, 'PATCH', `/api/orgs/${id}`, { slug: 'taken-slug' })).toMatchObject({ status: 409, body: { error: 'slug_taken' } });
    expect(await call(admin, 'PATCH', `/api/orgs/${id}`, { slug: '-' })).toMatchObject({ status: 400, body: { error: 'validation_error' } });
    expect(await call(admin, 'PATCH', `/api/orgs/${id}`, {})).toMatchObject({ status: 400, body: { error: 'validation_error' } });
    expect(await call(admin, 'PATCH', `/api/orgs/${other}`, { name: 'Not mine' })).toMatchObject({ status: 404 });
    expect(await call(admin, 'PATCH', `/api/orgs/${id}/members/${member.id}`, { role: 'emperor' })).toMatchObject({
      status: 400,
      body: { error: 'validation_error' },
    });
    expect(await call(admin, 'PATCH', `/api/orgs/${id}/members/${randomUUID()}`, { role: 'member' })).toMatchObject({ status: 404 });
    expect(await call(admin, 'DELETE', `/api/orgs/${id}/members/${biller.id}`)).toMatchObject({ status: 200 });
    expect((await call(biller, 'GET', `/api/orgs/${id}`)).status).toBe(404);
    // Only an owner deletes, re-authenticated.
    expect(await call(admin, 'DELETE', `/api/orgs/${id}`, { currentPassword: STRONG_PASSWORD })).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect(await call(owner, 'DELETE', `/api/orgs/${id}`, {})).toMatchObject({ status: 403, body: { error: 'reauthentication_required' } });
    expect(await call(owner, 'DELETE', `/api/orgs/${id}`, { currentPassword: 'Wrong-Password-1' })).toMatchObject({
      status: 401,
      body: { error: 'invalid_credentials' },
    });
    expect(await call(owner, 'DELETE', `/api/orgs/${id}`, { currentPassword: STRONG_PASSWORD })).toMatchObject({ status: 200 });
    expect((await call(admin, 'GET', '/api/orgs')).body.organizations).toEqual([]);

    const changed = await auditRows('member_role_changed');
    expect(changed[0]).toMatchObject({ user_id: admin.id, metadata: { organizationId: id, memberId: member.id, role: 'viewer', previousRole: 'member' } });
    expect((await auditRows('member_removed'))[0]).toMatchObject({ user_id: admin.id, metadata: { organizationId: id, memberId: biller.id } });
    expect((await auditRows('org_deleted'))[0]).toMatchObject({ user_id: owner.id, metadata: { organizationId: id } });
  });

  test('last_owner: demotion, leaving, removal and account deletion; a sole member deleting the account takes the organization along', async () => {
    await open();
    const owner = await person('o@example.com');
    const second = await person('s@example.com');
    const member = await person('m@example.com');
    const id = await createOrg(owner);
    await join_(id, owner, member, 'member');
    expect(await call(owner, 'PATCH', `/api/orgs/${id}/members/${owner.id}`, { role: 'admin' })).toMatchObject({ status: 409, body: { error: 'last_owner' } });
    expect(await call(owner, 'DELETE', `/api/orgs/${id}/members/${owner.id}`)).toMatchObject({ status: 409, body: { error: 'last_owner' } });
    expect(await call(owner, 'POST', '/api/auth/account/delete', { currentPassword: STRONG_PASSWORD })).toMatchObject({
      status: 409,
      body: { error: 'last_owner' },
    });
    expect((await call(owner, 'GET', '/api/orgs')).status).toBe(200);

    // With a second owner, the first may step down, leave, or delete the account.
    await join_(id, owner, second, 'owner');
    expect(await call(owner, 'PATCH', `/api/orgs/${id}/members/${owner.id}`, { role: 'admin' })).toMatchObject({ status: 200 });
    expect(await call(second, 'DELETE', `/api/orgs/${id}/members/${second.id}`)).toMatchObject({ status: 409, body: { error: 'last_owner' } });
    expect(await call(second, 'PATCH', `/api/orgs/${id}/members/${owner.id}`, { role: 'owner' })).toMatchObject({ status: 200 });
    expect(await call(owner, 'DELETE', `/api/orgs/${id}/members/${second.id}`)).toMatchObject({ status: 200 });
    expect(await call(member, 'DELETE', `/api/orgs/${id}/members/${member.id}`)).toMatchObject({ status: 200 });
    expect((await auditRows('member_removed')).at(-1)).toMatchObject({ user_id: member.id, metadata: { left: true } });

    // The last member leaving takes the organization along (there is no one left to own it).
    const alone = await createOrg(member, 'Alone');
    expect(await call(member, 'DELETE', `/api/orgs/${alone}/members/${member.id}`)).toMatchObject({ status: 200 });
    expect(await t.database.kysely.selectFrom('organizations').select('id').where('id', '=', alone).executeTakeFirst()).toBeUndefined();
    expect((await auditRows('org_deleted')).at(-1)).toMatchObject({ user_id: member.id, metadata: { organizationId: alone, reason: 'last_member_left' } });

    // Alone now: deleting the account deletes the organization with it.
    const solo = await createOrg(second, 'Solo');
    expect(await call(second, 'POST', '/api/auth/account/delete', { currentPassword: STRONG_PASSWORD })).toMatchObject({ status: 200 });
    expect(await t.database.kysely.selectFrom('organizations').select('id').where('id', '=', solo).executeTakeFirst()).toBeUndefined();
    expect((await call(owner, 'GET', `/api/orgs/${id}/members`)).body.members).toHaveLength(1);
  });

  test('invitations: mailed link, bound to the invited verified address, once, 7 days, re-inviting replaces, revocable', async () => {
    await open();
    const owner = await person('owner@example.com');
    const id = await createOrg(owner, 'Acme');
    const invited = await call(owner, 'POST', `/api/orgs/${id}/invitations`, { email: 'New.Person@Example.com', role: 'admin' });
    expect(invited.status).toBe(201);
    expect(invited.body.invitation).toMatchObject({ email: 'new.person@example.com', role: 'admin' });
    expect(invited.body.url).toBe(`http://localhost:3000/accept-invitation?token=${encodeURIComponent(invited.body.token)}`);
    await t.gatehouse.deliverQueuedEmails();
    const mail = t.sentEmails.find((email) => email.to === 'new.person@example.com')!;
    expect(mail.subject).toContain('Acme');
    expect(mail.text).toContain(invited.body.url);
    // The token is stored hashed: no column holds it.
    const row = await t.database.kysely.selectFrom('organization_invitations').selectAll().executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(String(invited.body.token).split('.')[1]);

    const listed = await call(owner, 'GET', `/api/orgs/${id}/invitations`);
    expect(listed.body.invitations).toEqual([
      { id: invited.body.invitation.id, email: 'new.person@example.com', role: 'admin', expiresAt: invited.body.invitation.expiresAt, invitedBy: owner.id },
    ]);
    expect(new Date(invited.body.invitation.expiresAt as string).getTime() - t.clock.now().getTime()).toBe(7 * DAY_MS);

    // Someone else's session: 403; unverified right address: 403; a wrong token: 400.
    const other = await person('other@example.com');
    expect(await call(other, 'POST', '/api/orgs/invitations/accept', { token: invited.body.token })).toMatchObject({
      status: 403,
      body: { error: 'invitation_email_mismatch' },
    });
    const unverified = await person('new.person@example.com', { verify: false });
    // An unproven address sends no invitation emails.
    const created = await call(unverified, 'POST', '/api/orgs', { name: 'Unproven' });
    expect(created.status).toBe(201);
    expect(await call(unverified, 'POST', `/api/orgs/${created.body.organization.id}/invitations`, { email: 'x@example.com', role: 'member' })).toMatchObject({
      status: 403,
      body: { error: 'email_not_verified' },
    });
    expect(await call(unverified, 'POST', '/api/orgs/invitations/accept', { token: invited.body.token })).toMatchObject({
      status: 403,
      body: { error: 'email_not_verified' },
    });
    expect(await call(unverified, 'POST', '/api/orgs/invitations/accept', { token: 'x.y' })).toMatchObject({ status: 400, body: { error: 'invalid_token' } });
    expect((await call(unverified, 'POST', '/api/orgs/invitations/accept', {})).status).toBe(400);
    expect((await t.request('POST', '/api/orgs/invitations/accept', { json: { token: invited.body.token } })).status).toBe(401);

    // Re-inviting replaces: the first token is dead, the second works once.
    const again = await call(owner, 'POST', `/api/orgs/${id}/invitations`, { email: 'new.person@example.com', role: 'member' });
    const verifiedToken = (
      (await (await t.request('POST', '/api/auth/resend-verification', { json: {}, cookie: unverified.cookie })).json()) as { verificationToken: string }
    ).verificationToken;
    expect((await t.request('POST', '/api/auth/verify-email', { json: { token: verifiedToken }, cookie: unverified.cookie })).status).toBe(200);
    expect(await call(unverified, 'POST', '/api/orgs/invitations/accept', { token: invited.body.token })).toMatchObject({
      status: 400,
      body: { error: 'invalid_token' },
    });
    expect(await call(unverified, 'POST', '/api/orgs/invitations/accept', { token: again.body.token })).toMatchObject({
      status: 200,
      body: { organization: { id, name: 'Acme' }, role: 'member', permissions: [] },
    });
    expect(await call(unverified, 'POST', '/api/orgs/invitations/accept', { token: again.body.token })).toMatchObject({
      status: 400,
      body: { error: 'invalid_token' },
    });
    expect(await call(owner, 'POST', `/api/orgs/${id}/invitations`, { email: 'new.person@example.com', role: 'member' })).toMatchObject({ status: 400 });

    // Expiry: 7 days and a second later the link is dead.
    const late = await call(owner, 'POST', `/api/orgs/${id}/invitations`, { email: 'late@example.com', role: 'member' });
    t.clock.advance(7 * DAY_MS + 1000);
    const lateComer = await person('late@example.com');
    // The owner's session is past its lifetime too: a new sign-in.
    const login = await t.request('POST', '/api/auth/login', { json: { email: owner.email, password: STRONG_PASSWORD } });
    owner.cookie = cookieFrom(login, COOKIE)!;
    expect(await call(lateComer, 'POST', '/api/orgs/invitations/accept', { token: late.body.token })).toMatchObject({
      status: 400,
      body: { error: 'invalid_token' },
    });
    expect((await call(owner, 'GET', `/api/orgs/${id}/invitations`)).body.invitations).toEqual([]);

    // Revoked: gone from the list, its link dead.
    const revoked = await call(owner, 'POST', `/api/orgs/${id}/invitations`, { email: 'late@example.com', role: 'member' });
    expect(await call(owner, 'DELETE', `/api/orgs/${id}/invitations/${revoked.body.invitation.id}`)).toMatchObject({ status: 200 });
    expect(await call(owner, 'DELETE', `/api/orgs/${id}/invitations/${revoked.body.invitation.id}`)).toMatchObject({ status: 404 });
    expect(await call(lateComer, 'POST', '/api/orgs/invitations/accept', { token: revoked.body.token })).toMatchObject({ status: 400 });
    expect((await auditRows('invitation_accepted'))[0]).toMatchObject({ user_id: unverified.id, metadata: { organizationId: id } });
    // The re-invitation withdrew the first one (`replaced`); the revocation is its own row.
    const revokedRows = await auditRows('invitation_revoked');
    expect(revokedRows.map((row) => row.metadata.reason)).toEqual(['replaced', 'revoked']);
    expect(revokedRows[1]).toMatchObject({ user_id: owner.id, metadata: { organizationId: id, email: 'late@example.com' } });
    // No token, nor its secret, in any audit row or webhook event.
    const everything = JSON.stringify([
      await t.database.kysely.selectFrom('audit_events').selectAll().execute(),
      await t.database.kysely.selectFrom('webhook_events').selectAll().execute(),
    ]);
    for (const token of [invited.body.token, again.body.token, late.body.token, revoked.body.token] as string[])
      expect(everything).not.toContain(token.split('.')[1]);
  });

  test('limits: invitations per organization and per user, acceptances per user', async () => {
    await open({ RATE_LIMIT_ORG_INVITATION: '2/1h', RATE_LIMIT_ORG_INVITATION_ACCEPT: '3/15m' });
    const owner = await person('owner@example.com');
    const id = await createOrg(owner);
    for (const n of [1, 2]) expect((await call(owner, 'POST', `/api/orgs/${id}/invitations`, { email: `p${n}@example.com`, role: 'member' })).status).toBe(201);
    const refused = await t.request('POST', `/api/orgs/${id}/invitations`, { cookie: owner.cookie, json: { email: 'p3@example.com', role: 'member' } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).not.toBeNull();
    const guesser = await person('guess@example.com');
    for (let n = 0; n < 3; n++)
      expect((await call(guesser, 'POST', '/api/orgs/invitations/accept', { token: 'AAAAAAAAAAAAAAAAAAAAAA.' + 'B'.repeat(43) })).status).toBe(400);
    expect((await call(guesser, 'POST', '/api/orgs/invitations/accept', { token: 'x' })).status).toBe(429);
  });

  test('webhook events: organization, member and invitation changes are reported in their transaction', async () => {
    await open();
    const now = t.clock.now().getTime();
    await t.database.kysely
      .insertInto('webhook_endpoints')
      .values({
        id: randomUUID(),
        url: 'http://127.0.0.1:9/hook',
        events: ',*,',
        description: null,
        secret_sealed: 'x',
        previous_secret_sealed: null,
        previous_secret_until: null,
        disabled_at: null,
        disabled_reason: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const owner = await person('owner@example.com');
    const joiner = await person('joiner@example.com');
    const id = await createOrg(owner, 'Acme');
    await join_(id, owner, joiner, 'member');
    await call(owner, 'PATCH', `/api/orgs/${id}/members/${joiner.id}`, { role: 'admin' });
    await call(owner, 'DELETE', `/api/orgs/${id}/members/${joiner.id}`);
    await call(owner, 'PATCH', `/api/orgs/${id}`, { name: 'Acme 2' });
    // A member's account deleted: their membership ends as a removal does.
    const leaver = await person('leaver@example.com');
    await join_(id, owner, leaver, 'member');
    expect((await call(leaver, 'POST', '/api/auth/account/delete', { currentPassword: STRONG_PASSWORD })).status).toBe(200);
    const removedByDeletion = await t.database.kysely
      .selectFrom('webhook_events')
      .select('payload')
      .where('type', '=', 'member.removed')
      .where('user_id', '=', leaver.id)
      .execute();
    expect(removedByDeletion).toHaveLength(1);
    await call(owner, 'DELETE', `/api/orgs/${id}`, { currentPassword: STRONG_PASSWORD });
    const events = await t.database.kysely
      .selectFrom('webhook_events')
      .select(['type', 'payload'])
      .where('type', 'not like', 'user.%')
      .where('type', 'not like', 'session.%')
      .execute();
    // The first event of each type (the leaver's come later).
    const byType = new Map<string, Record<string, unknown>>();
    for (const event of events) if (!byType.has(event.type)) byType.set(event.type, JSON.parse(event.payload).data as Record<string, unknown>);
    expect([...byType.keys()].sort()).toEqual(
      [
        'invitation.accepted',
        'invitation.created',
        'member.added',
        'member.removed',
        'member.role_changed',
        'organization.created',
        'organization.deleted',
        'organization.updated',
      ].sort(),
    );
    expect(byType.get('invitation.created')).toMatchObject({ organizationId: id, email: 'joiner@example.com', role: 'member', invitedBy: owner.id });
    expect(byType.get('member.role_changed')).toMatchObject({ userId: joiner.id, organizationId: id, role: 'admin', previousRole: 'member', actor: owner.id });
    expect(byType.get('organization.updated')).toMatchObject({ organizationId: id, name: 'Acme 2' });
    for (const event of events) expect(event.payload).not.toMatch(/token|secret|password/i);
  });

  if (dialect === 'postgres') {
    test('two owners demoting each other at the same moment never leave the organization without an owner', async () => {
      await open();
      const a = await person('a@example.com');
      const b = await person('b@example.com');
      for (let round = 0; round < 8; round++) {
        const id = await createOrg(a, `Race ${round}`);
        await join_(id, a, b, 'owner');
        const [first, second] = await Promise.all([
          call(a, 'PATCH', `/api/orgs/${id}/members/${b.id}`, { role: 'member' }),
          call(b, 'PATCH', `/api/orgs/${id}/members/${a.id}`, { role: 'member' }),
        ]);
        const statuses = [first.status, second.status].sort();
        // One wins; the other either finds the last owner (409) or has just lost the right to act (403).
        expect(statuses[0]).toBe(200);
        expect([403, 409]).toContain(statuses[1]);
        const owners = await t.database.kysely
          .selectFrom('organization_members')
          .select('user_id')
          .where('organization_id', '=', id)
          .where('role', '=', 'owner')
          .execute();
        expect(owners).toHaveLength(1);
        // Two owners stepping down themselves at once: one stays.
        const promoted = owners[0]!.user_id === a.id ? b : a;
        const keeper = promoted === a ? b : a;
        expect((await call(keeper, 'PATCH', `/api/orgs/${id}/members/${promoted.id}`, { role: 'owner' })).status).toBe(200);
        const results = await Promise.all([
          call(a, 'PATCH', `/api/orgs/${id}/members/${a.id}`, { role: 'admin' }),
          call(b, 'PATCH', `/api/orgs/${id}/members/${b.id}`, { role: 'admin' }),
        ]);
        expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
        expect(
          await t.database.kysely.selectFrom('organization_members').select('user_id').where('organization_id', '=', id).where('role', '=', 'owner').execute(),
        ).toHaveLength(1);
      }
    });
  }
});

describe('ORG_ROLES_FILE', () => {
  const load = (file: string): string[] => {
    try {
      loadConfig({ JWT_SECRET: TEST_JWT_SECRET, ORG_ROLES_FILE: file });
      return [];
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
  };
  test('a good file gives its roles beside the built-in ones', () => {
    const config = loadConfig({ JWT_SECRET: TEST_JWT_SECRET, ORG_ROLES_FILE: rolesFile('{"billing": ["invoices:read"], "support": []}') });
    expect([...config.organizationRoles.entries()]).toEqual([
      ['owner', []],
      ['admin', []],
      ['member', []],
      ['billing', ['invoices:read']],
      ['support', []],
    ]);
  });
  test.each([
    ['/nonexistent/roles.json', 'no such file'],
    [rolesFile('{not json'), 'is not valid JSON'],
    [rolesFile('["billing"]'), 'expected a JSON object'],
    [rolesFile('{"owner": ["x"]}'), 'built-in role'],
    [rolesFile('{"Billing Team": []}'), 'must be 1 to 64 lower-case'],
    [rolesFile('{"billing": "invoices:read"}'), 'expected a list of permission strings'],
    [rolesFile('{"billing": ["has space"]}'), 'is not a permission string'],
  ])('%s is refused naming the variable and the problem', (file, problem) => {
    const problems = load(file);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^ORG_ROLES_FILE: /);
    expect(problems[0]).toContain(problem);
  });
});
