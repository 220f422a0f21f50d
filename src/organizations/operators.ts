/**
 * @module The operators' side of organizations, the same functions behind the admin API
 * (admin-routes.ts) and `gatehouse orgs` (cli.ts): search them a page at a time, find one by id or
 * slug, show it with its members, delete it. A deletion is audited (`org_deleted`, no user,
 * `metadata.actor` = `admin` or `cli`) and reported to webhooks like an owner's.
 */
import { z } from 'zod';
import { DEFAULT_PAGE_SIZE, encodeCursor, parse, userListQuery } from '../admin/input.js';
import { notFound, validationError } from '../errors.js';
import type { RequestContext } from '../request-context.js';
import type { Stores } from '../stores.js';
import { NO_SUCH_ORGANIZATION, eraseOrganization, memberView, organizationView } from './flow.js';
import type { Organization } from './store.js';

const ORGANIZATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The form of a slug (routes.ts); a UUID has it too, so an id is tried first. */
const SLUG = /^[a-z0-9-]{1,64}$/;

/** The same fields and bounds as the users' search: `query` (name, slug or id), `limit`, `cursor`. */
export const organizationListQuery = userListQuery;

/** `:id` of the admin API: an id, or a slug. */
export const organizationReferenceParam = z.object({ id: z.string().regex(SLUG).describe("an organization's id (UUID) or its slug") });

/** What the operators' functions need: the stores (the database of the server, or the one the CLI opened). */
export interface OrganizationOperatorDeps {
  stores: Stores;
}

export interface OrganizationListInput {
  query: string | null;
  limit: number;
  after: { createdAt: Date; id: string } | null;
}

/** An organization in the operators' list: with its count of members. */
export interface OperatorOrganization {
  id: string;
  name: string;
  slug: string;
  createdAt: string;
  members: number;
}

function badCursor(): never {
  throw validationError([{ path: 'cursor', message: 'is not a cursor from this list' }]);
}

/** The opaque cursor (admin/input.ts's encoding: base64url of JSON) of the last organization of a page. */
function decodeCursor(text: string): { createdAt: Date; id: string } {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return badCursor();
  }
  if (!Array.isArray(value) || value.length !== 2 || !Number.isSafeInteger(value[0]) || typeof value[1] !== 'string' || !ORGANIZATION_ID.test(value[1])) {
    return badCursor();
  }
  const createdAt = new Date(value[0] as number);
  if (Number.isNaN(createdAt.getTime())) return badCursor();
  return { createdAt, id: value[1] };
}

/** The query string (or the CLI's options) as a search; 400 `validation_error` naming the field. */
export function parseOrganizationListQuery(raw: Record<string, string | undefined>): OrganizationListInput {
  const query = parse(organizationListQuery, raw);
  return {
    query: query.query === undefined || query.query === '' ? null : query.query,
    limit: query.limit ?? DEFAULT_PAGE_SIZE,
    after: query.cursor === undefined ? null : decodeCursor(query.cursor),
  };
}

/** Oldest first; `nextCursor` when more follow. */
export async function searchOrganizations(
  { stores }: OrganizationOperatorDeps,
  input: OrganizationListInput,
): Promise<{ organizations: OperatorOrganization[]; nextCursor: string | null }> {
  const rows = await stores.organizations.searchOrganizations({ ...input, limit: input.limit + 1 });
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  const nextCursor = rows.length > input.limit && last !== undefined ? encodeCursor([last.createdAt.getTime(), last.id]) : null;
  return { organizations: page.map((row) => ({ ...organizationView(row), members: row.members })), nextCursor };
}

/** The organization of an id or a slug (as an operator types it); 404 for anything else. */
export async function findOrganizationByReference({ stores }: OrganizationOperatorDeps, reference: string): Promise<Organization> {
  const text = reference.trim().toLowerCase();
  if (!SLUG.test(text)) throw notFound(NO_SUCH_ORGANIZATION);
  const byId = ORGANIZATION_ID.test(text) ? await stores.organizations.findOrganization(text) : null;
  const organization = byId ?? (await stores.organizations.findOrganizationBySlug(text));
  if (organization === null) throw notFound(NO_SUCH_ORGANIZATION);
  return organization;
}

export async function showOrganization(
  { stores }: OrganizationOperatorDeps,
  organization: Organization,
): Promise<{ organization: ReturnType<typeof organizationView>; members: ReturnType<typeof memberView>[] }> {
  const members = await stores.organizations.listMembers(organization.id);
  return { organization: organizationView(organization), members: members.map(memberView) };
}

/** Every member loses it (and the app grants whose tokens named it); 404 when it went meanwhile. */
/** Where an operator's change comes from: the admin API's request, or the command line (no address). */
export type OperatorContext = Pick<RequestContext, 'now' | 'userAgent'> & { ip: string | null };

export async function deleteOrganizationAsOperator(
  { stores }: OrganizationOperatorDeps,
  organization: Organization,
  by: { actor: 'admin' | 'cli'; ctx: OperatorContext },
): Promise<{ deleted: true }> {
  if (!(await eraseOrganization(stores, organization.id, { actor: null, ctx: by.ctx, auditMetadata: { actor: by.actor } }))) {
    throw notFound(NO_SUCH_ORGANIZATION);
  }
  return { deleted: true };
}
