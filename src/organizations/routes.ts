/**
 * @module The organizations API under /api/orgs: a person's organizations, their members and
 * invitations. Every route needs the session cookie (401 `not_authenticated`); a person who is not
 * a member of an organization gets 404 for it, whatever the route.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import { loginPasswordSchema, emailSchema } from '../credentials/rules.js';
import { notFound } from '../errors.js';
import { jsonAnswer } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { acceptNoBody, readJsonBody } from '../http/json-body.js';
import { okAnswer, type RouteDoc } from '../http/route-docs.js';
import type { SessionCookieSettings } from '../session/cookie.js';
import type { SessionDeps } from '../session/flow.js';
import { requireSession } from '../session/read-session.js';
import {
  changeMemberRole,
  createOrganization,
  deleteOrganization,
  listMembers,
  listOrganizations,
  memberView,
  NO_SUCH_ORGANIZATION,
  organizationView,
  readOrganization,
  removeMember,
  updateOrganization,
} from './flow.js';
import { acceptInvitation, createInvitation, invitationView, listInvitations, revokeInvitation, type InvitationDeps } from './invitations.js';

const ORGANIZATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const USER_ID = /^[A-Za-z0-9_-]{1,64}$/;
const INVITATION_ID = /^[A-Za-z0-9_-]{22}$/;

/** A name people read in pages and emails: no control characters, no line breaks. */
const nameSchema = z
  .string()
  .trim()
  .min(1, 'is required')
  .max(100, 'must be at most 100 characters')
  .refine((name) => !/\p{Cc}/u.test(name), 'must not contain control characters');
const slugSchema = z
  .string()
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/, 'must be 1 to 64 lower-case letters, digits or "-", not starting or ending with "-"');
const roleSchema = z.string().min(1, 'is required').max(64, 'must be at most 64 characters');

const createBody = z.object({ name: nameSchema, slug: slugSchema.optional() });
const updateBody = z.object({ name: nameSchema.optional(), slug: slugSchema.optional() }).refine((body) => body.name !== undefined || body.slug !== undefined, {
  message: 'give a name or a slug',
});
const deleteBody = z.object({ currentPassword: loginPasswordSchema.optional() });
const roleBody = z.object({ role: roleSchema });
const invitationBody = z.object({ email: emailSchema, role: roleSchema });
// Any text: a token of another form is just a wrong one (400 invalid_token); the body limit bounds it.
const acceptBody = z.object({ token: z.string().min(1, 'is required') });

export interface OrganizationRouteDeps {
  flow: InvitationDeps;
  session: SessionDeps;
  cookie: SessionCookieSettings;
  devMode: boolean;
}

function organizationIdOf(id: string): string {
  if (!ORGANIZATION_ID.test(id)) throw notFound(NO_SUCH_ORGANIZATION);
  return id;
}

function userIdOf(id: string): string {
  if (!USER_ID.test(id)) throw notFound('No such member in this organization.');
  return id;
}

export function createOrganizationRoutes(deps: OrganizationRouteDeps): Hono<AppEnv> {
  return invitationRoutes(organizationRoutes(new Hono<AppEnv>(), deps), deps);
}

function organizationRoutes(app: Hono<AppEnv>, deps: OrganizationRouteDeps): Hono<AppEnv> {
  const { flow } = deps;
  return app
    .post('/orgs', async (c) => {
      const signedIn = await requireSession(c, deps);
      const body = await readJsonBody(c, createBody);
      const { organization, role } = await createOrganization(flow, signedIn, body, c.get('requestContext'));
      return jsonAnswer(c, { organization: organizationView(organization), role }, 201);
    })
    .get('/orgs', async (c) => {
      const signedIn = await requireSession(c, deps);
      return jsonAnswer(c, { organizations: await listOrganizations(flow, signedIn.user.id) });
    })
    .post('/orgs/invitations/accept', async (c) => {
      const signedIn = await requireSession(c, deps);
      const { token } = await readJsonBody(c, acceptBody);
      const { organization, role } = await acceptInvitation(flow, signedIn, token, c.get('requestContext'));
      return jsonAnswer(c, { organization: organizationView(organization), role, permissions: flow.roles.get(role) ?? [] });
    })
    .get('/orgs/:id', async (c) => {
      const signedIn = await requireSession(c, deps);
      const { organization, role, permissions } = await readOrganization(flow, signedIn.user.id, organizationIdOf(c.req.param('id')));
      return jsonAnswer(c, { organization: organizationView(organization), role, permissions });
    })
    .patch('/orgs/:id', async (c) => {
      const signedIn = await requireSession(c, deps);
      const id = organizationIdOf(c.req.param('id'));
      const body = await readJsonBody(c, updateBody);
      return jsonAnswer(c, { organization: organizationView(await updateOrganization(flow, signedIn, id, body, c.get('requestContext'))) });
    })
    .delete('/orgs/:id', async (c) => {
      const signedIn = await requireSession(c, deps);
      const id = organizationIdOf(c.req.param('id'));
      const body = await readJsonBody(c, deleteBody);
      await deleteOrganization(flow, signedIn, id, body, c.get('requestContext'));
      return jsonAnswer(c, { ok: true });
    })
    .get('/orgs/:id/members', async (c) => {
      const signedIn = await requireSession(c, deps);
      const members = await listMembers(flow, signedIn.user.id, organizationIdOf(c.req.param('id')));
      return jsonAnswer(c, { members: members.map(memberView) });
    })
    .patch('/orgs/:id/members/:userId', async (c) => {
      const signedIn = await requireSession(c, deps);
      const { role } = await readJsonBody(c, roleBody);
      const organizationId = organizationIdOf(c.req.param('id'));
      const userId = userIdOf(c.req.param('userId'));
      const member = await changeMemberRole(flow, signedIn, { organizationId, userId, role }, c.get('requestContext'));
      return jsonAnswer(c, { member: memberView(member) });
    });
}

function invitationRoutes(app: Hono<AppEnv>, deps: OrganizationRouteDeps): Hono<AppEnv> {
  const { flow } = deps;
  return app
    .delete('/orgs/:id/members/:userId', async (c) => {
      await acceptNoBody(c);
      const signedIn = await requireSession(c, deps);
      const organizationId = organizationIdOf(c.req.param('id'));
      await removeMember(flow, signedIn, { organizationId, userId: userIdOf(c.req.param('userId')) }, c.get('requestContext'));
      return jsonAnswer(c, { ok: true });
    })
    .post('/orgs/:id/invitations', async (c) => {
      const signedIn = await requireSession(c, deps);
      const organizationId = organizationIdOf(c.req.param('id'));
      const body = await readJsonBody(c, invitationBody);
      const { invitation, token, url } = await createInvitation(flow, signedIn, { organizationId, ...body }, c.get('requestContext'));
      const { invitedBy: _invitedBy, ...shown } = invitationView(invitation);
      return jsonAnswer(c, { invitation: shown, ...(deps.devMode ? { token, url } : {}) }, 201);
    })
    .get('/orgs/:id/invitations', async (c) => {
      const signedIn = await requireSession(c, deps);
      const requestContext = c.get('requestContext');
      const invitations = await listInvitations(flow, signedIn.user.id, organizationIdOf(c.req.param('id')), requestContext.now);
      return jsonAnswer(c, { invitations: invitations.map(invitationView) });
    })
    .delete('/orgs/:id/invitations/:invitationId', async (c) => {
      await acceptNoBody(c);
      const signedIn = await requireSession(c, deps);
      const organizationId = organizationIdOf(c.req.param('id'));
      const invitationId = c.req.param('invitationId');
      if (!INVITATION_ID.test(invitationId)) throw notFound('No such invitation.');
      await revokeInvitation(flow, signedIn, { organizationId, invitationId }, c.get('requestContext'));
      return jsonAnswer(c, { ok: true });
    });
}

const organizationAnswer = z.object({ id: z.string(), name: z.string(), slug: z.string(), createdAt: z.string() });
const permissionsAnswer = z.array(z.string()).describe("the role's permission strings from ORG_ROLES_FILE; [] for owner, admin and member");
const memberAnswer = z.object({ userId: z.string(), email: z.string().nullable(), role: z.string(), joinedAt: z.string() });
const invitationAnswer = z.object({ id: z.string(), email: z.string(), role: z.string(), expiresAt: z.string() });
const idParam = z.object({ id: z.string().regex(ORGANIZATION_ID).describe("an organization's id") });
const memberParams = idParam.extend({ userId: z.string().regex(USER_ID).describe("a member's user id") });
const invitationParams = idParam.extend({ invitationId: z.string().regex(INVITATION_ID).describe("an invitation's id") });
const TAG = 'Organizations';

export const organizationRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/orgs',
    tag: TAG,
    summary: 'Create an organization; the caller is its owner',
    description: 'Without a slug, one is made from the name (with a suffix when taken). A slug given and taken is 409 slug_taken.',
    auth: 'session',
    body: createBody,
    answers: [{ status: 201, description: 'Created.', json: z.object({ organization: organizationAnswer, role: z.literal('owner') }) }],
    errors: ['slug_taken', 'rate_limited'],
  },
  {
    method: 'get',
    path: '/orgs',
    tag: TAG,
    summary: "The caller's organizations, with their role and its permissions",
    auth: 'session',
    answers: [
      {
        status: 200,
        description: 'By name.',
        json: z.object({
          organizations: z.array(z.object({ id: z.string(), name: z.string(), slug: z.string(), role: z.string(), permissions: permissionsAnswer })),
        }),
      },
    ],
  },
  {
    method: 'post',
    path: '/orgs/invitations/accept',
    tag: TAG,
    summary: "Accept an invitation with the link's token",
    description: "The session's email address must be the invited one (403 invitation_email_mismatch), and verified (403 email_not_verified).",
    auth: 'session',
    body: acceptBody,
    answers: [
      { status: 200, description: 'A member now.', json: z.object({ organization: organizationAnswer, role: z.string(), permissions: permissionsAnswer }) },
    ],
    errors: ['invalid_token', 'invitation_email_mismatch', 'email_not_verified', 'rate_limited'],
  },
  {
    method: 'get',
    path: '/orgs/:id',
    tag: TAG,
    summary: 'An organization (members only: 404 for anyone else)',
    auth: 'session',
    params: idParam,
    answers: [
      {
        status: 200,
        description: 'The organization and the caller’s role.',
        json: z.object({ organization: organizationAnswer, role: z.string(), permissions: permissionsAnswer }),
      },
    ],
    errors: ['not_found'],
  },
  {
    method: 'patch',
    path: '/orgs/:id',
    tag: TAG,
    summary: 'Rename it or change its slug (admins and owners)',
    auth: 'session',
    params: idParam,
    body: updateBody,
    answers: [{ status: 200, description: 'Changed.', json: z.object({ organization: organizationAnswer }) }],
    errors: ['not_found', 'forbidden', 'slug_taken'],
  },
  {
    method: 'delete',
    path: '/orgs/:id',
    tag: TAG,
    summary: 'Delete it (owners, re-authenticated with currentPassword in a JSON body)',
    auth: 'session',
    params: idParam,
    body: deleteBody,
    answers: [{ status: 200, description: 'Deleted, with its memberships and invitations.', json: okAnswer }],
    errors: ['not_found', 'forbidden', 'invalid_credentials', 'reauthentication_required', 'account_locked', 'rate_limited'],
  },
  {
    method: 'get',
    path: '/orgs/:id/members',
    tag: TAG,
    summary: 'Its members, oldest first',
    auth: 'session',
    params: idParam,
    answers: [{ status: 200, description: 'The members.', json: z.object({ members: z.array(memberAnswer) }) }],
    errors: ['not_found'],
  },
  {
    method: 'patch',
    path: '/orgs/:id/members/:userId',
    tag: TAG,
    summary: "Change a member's role (admins change members and admins; only owners make or unmake owners)",
    auth: 'session',
    params: memberParams,
    body: roleBody,
    answers: [{ status: 200, description: 'The member with the new role.', json: z.object({ member: memberAnswer }) }],
    errors: ['not_found', 'forbidden', 'last_owner'],
  },
  {
    method: 'delete',
    path: '/orgs/:id/members/:userId',
    tag: TAG,
    summary: 'Remove a member (admins; owners for owners), or leave (anyone, their own user id)',
    auth: 'session',
    params: memberParams,
    body: 'none',
    answers: [{ status: 200, description: 'Removed.', json: okAnswer }],
    errors: ['not_found', 'forbidden', 'last_owner'],
  },
  {
    method: 'post',
    path: '/orgs/:id/invitations',
    tag: TAG,
    summary: 'Invite an address with a role (admins; owners to invite an owner); re-inviting replaces the invitation',
    auth: 'session',
    params: idParam,
    body: invitationBody,
    answers: [
      {
        status: 201,
        description: 'The invitation is mailed (valid 7 days, once); development mode adds the token and its URL.',
        json: z.object({ invitation: invitationAnswer, token: z.string().optional(), url: z.string().optional() }),
      },
    ],
    errors: ['not_found', 'forbidden', 'email_not_verified', 'rate_limited'],
  },
  {
    method: 'get',
    path: '/orgs/:id/invitations',
    tag: TAG,
    summary: 'The pending invitations (admins and owners)',
    auth: 'session',
    params: idParam,
    answers: [
      { status: 200, description: 'Newest first.', json: z.object({ invitations: z.array(invitationAnswer.extend({ invitedBy: z.string().nullable() })) }) },
    ],
    errors: ['not_found', 'forbidden'],
  },
  {
    method: 'delete',
    path: '/orgs/:id/invitations/:invitationId',
    tag: TAG,
    summary: 'Revoke an invitation (admins and owners)',
    auth: 'session',
    params: invitationParams,
    body: 'none',
    answers: [{ status: 200, description: 'Revoked: its link no longer works.', json: okAnswer }],
    errors: ['not_found', 'forbidden'],
  },
];
