/**
 * @module The admin API's organizations, `/api/admin/orgs…`, behind the admin key check
 * (admin/routes.ts adminKeyCheck), mounted only with ADMIN_API_KEY: search them, show one with its
 * members, delete one. Thin: the rules are operators.ts's, which `gatehouse orgs` calls too.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { jsonAnswer } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { acceptNoBody } from '../http/json-body.js';
import type { RouteDoc } from '../http/route-docs.js';
import {
  deleteOrganizationAsOperator,
  findOrganizationByReference,
  organizationListQuery,
  organizationReferenceParam,
  parseOrganizationListQuery,
  searchOrganizations,
  showOrganization,
  type OrganizationOperatorDeps,
} from './operators.js';

export function createOrganizationAdminRoutes(deps: { flow: OrganizationOperatorDeps; requireAdminKey: MiddlewareHandler<AppEnv> }): Hono<AppEnv> {
  const { flow } = deps;
  return new Hono<AppEnv>()
    .use('/orgs', deps.requireAdminKey)
    .use('/orgs/*', deps.requireAdminKey)
    .get('/orgs', async (c) => jsonAnswer(c, await searchOrganizations(flow, parseOrganizationListQuery(c.req.query()))))
    .get('/orgs/:id', async (c) => jsonAnswer(c, await showOrganization(flow, await findOrganizationByReference(flow, c.req.param('id')))))
    .delete('/orgs/:id', async (c) => {
      await acceptNoBody(c);
      const organization = await findOrganizationByReference(flow, c.req.param('id'));
      return jsonAnswer(c, await deleteOrganizationAsOperator(flow, organization, { actor: 'admin', ctx: c.get('requestContext') }));
    });
}

const organization = z.object({ id: z.string(), name: z.string(), slug: z.string(), createdAt: z.string() });
const member = z.object({ userId: z.string(), email: z.string().nullable(), role: z.string(), joinedAt: z.string() });

/** Mounted under /api/admin only while ADMIN_API_KEY is set. */
export const organizationAdminRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/orgs',
    tag: 'Admin',
    summary: 'Search organizations by name, slug or id, a page at a time (oldest first)',
    auth: 'admin-key',
    query: organizationListQuery,
    answers: [
      {
        status: 200,
        description: 'A page of organizations, each with its count of members.',
        json: z.object({ organizations: z.array(organization.extend({ members: z.number().int() })), nextCursor: z.string().nullable() }),
      },
    ],
    errors: ['validation_error'],
  },
  {
    method: 'get',
    path: '/orgs/:id',
    tag: 'Admin',
    summary: 'One organization with its members and their roles (oldest member first)',
    auth: 'admin-key',
    params: organizationReferenceParam,
    answers: [{ status: 200, description: 'The organization.', json: z.object({ organization, members: z.array(member) }) }],
    errors: ['not_found'],
  },
  {
    method: 'delete',
    path: '/orgs/:id',
    tag: 'Admin',
    summary: 'Delete the organization: every member loses it, and the app grants whose tokens named it',
    auth: 'admin-key',
    body: 'none',
    params: organizationReferenceParam,
    answers: [{ status: 200, description: 'Deleted, and audited (org_deleted) with actor admin.', json: z.object({ deleted: z.literal(true) }) }],
    errors: ['not_found'],
  },
];
