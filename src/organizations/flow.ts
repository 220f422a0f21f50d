/**
 * @module Organizations and their members: create, read, rename, delete; list members, change a
 * role, remove a member or leave. Every change of members runs in one transaction that first locks
 * the organization's row, so the last owner cannot be lost to two requests racing; each change is
 * audited (`metadata.organizationId`) and reported to webhooks in that transaction.
 *
 * A person who is not a member gets 404 for everything about an organization: its existence is
 * not told to outsiders.
 */
import { randomUUID } from 'node:crypto';
import { recordAudit } from '../audit/record.js';
import type { ReauthDeps } from '../credentials/reauthenticate.js';
import { reauthenticate } from '../credentials/reauthenticate.js';
import { conflict, notFound, validationError } from '../errors.js';
import type { RequestContext } from '../request-context.js';
import type { ValidSession } from '../session/flow.js';
import type { Stores } from '../stores.js';
import { emitEvent } from '../webhooks/events.js';
import { membershipsOf, type MembershipClaim } from './memberships.js';
import { assertMayAssign, assertMayRemove, assertManager, assertOwner, lastOwner } from './rights.js';
import type { Member, Organization } from './store.js';

export interface OrganizationDeps extends ReauthDeps {
  /** Every role with its permission strings (built-in ones with `[]`). */
  roles: ReadonlyMap<string, readonly string[]>;
}

export const NO_SUCH_ORGANIZATION = 'No such organization.';
/** Tokens naming organizations come from grants with this scope. */
export const ORGANIZATIONS_SCOPE = 'organizations';

export function organizationView(organization: Organization): { id: string; name: string; slug: string; createdAt: string } {
  return { id: organization.id, name: organization.name, slug: organization.slug, createdAt: organization.createdAt.toISOString() };
}

export function memberView(member: Member): { userId: string; email: string | null; role: string; joinedAt: string } {
  return { userId: member.userId, email: member.email, role: member.role, joinedAt: member.joinedAt.toISOString() };
}

/** A slug from a name: lower-case ASCII letters and digits joined by `-` (`Ünïcode Ltd.` → `unicode-ltd`). */
export function slugFromName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
  return slug === '' ? 'org' : slug;
}

/** The role must be one the organization knows: built-in or ORG_ROLES_FILE's. */
export function assertKnownRole(deps: Pick<OrganizationDeps, 'roles'>, role: string): void {
  if (!deps.roles.has(role)) throw validationError([{ path: 'role', message: `is not a role here (roles: ${[...deps.roles.keys()].join(', ')})` }]);
}

/** The caller's membership, or 404 as if the organization did not exist. */
export async function membershipOf(stores: Stores, organizationId: string, userId: string): Promise<{ organization: Organization; member: Member }> {
  const [organization, member] = await Promise.all([
    stores.organizations.findOrganization(organizationId),
    stores.organizations.findMember(organizationId, userId),
  ]);
  if (organization === null || member === null) throw notFound(NO_SUCH_ORGANIZATION);
  return { organization, member };
}

export async function createOrganization(
  deps: OrganizationDeps,
  signedIn: ValidSession,
  input: { name: string; slug?: string | undefined },
  ctx: RequestContext,
): Promise<{ organization: Organization; role: 'owner' }> {
  const { user } = signedIn;
  await deps.limits.consume('orgCreate', { userId: user.id }, ctx.now);
  const base = input.slug ?? slugFromName(input.name);
  // A derived slug that is taken gets a suffix; a slug the person chose is theirs or a 409.
  const candidates =
    input.slug !== undefined ? [base] : [base, `${base}-2`, `${base}-3`, `${base}-${randomUUID().slice(0, 6)}`, `${base}-${randomUUID().slice(0, 8)}`];
  for (const slug of candidates) {
    const organization: Organization = { id: randomUUID(), name: input.name, slug, createdAt: ctx.now, updatedAt: ctx.now };
    const created = await deps.stores.transaction(async (tx) => {
      if (!(await tx.organizations.createOrganization(organization, user.id))) return false;
      const facts = { organizationId: organization.id, name: organization.name, slug };
      await recordAudit(tx.audit, ctx, 'org_created', user.id, facts);
      await recordAudit(tx.audit, ctx, 'member_added', user.id, { organizationId: organization.id, memberId: user.id, role: 'owner' });
      await emitEvent(tx, ctx.now, 'organization.created', user, facts);
      await emitEvent(tx, ctx.now, 'member.added', user, { organizationId: organization.id, role: 'owner', actor: user.id });
      return true;
    });
    if (created) return { organization, role: 'owner' };
  }
  throw conflict('slug_taken', 'This slug is taken. Choose another.');
}

export async function listOrganizations(deps: Pick<OrganizationDeps, 'stores' | 'roles'>, userId: string): Promise<MembershipClaim[]> {
  return membershipsOf(deps.stores.organizations, deps.roles, userId);
}

export async function readOrganization(
  deps: Pick<OrganizationDeps, 'stores' | 'roles'>,
  userId: string,
  organizationId: string,
): Promise<{ organization: Organization; role: string; permissions: readonly string[] }> {
  const { organization, member } = await membershipOf(deps.stores, organizationId, userId);
  return { organization, role: member.role, permissions: deps.roles.get(member.role) ?? [] };
}

export async function updateOrganization(
  deps: OrganizationDeps,
  signedIn: ValidSession,
  organizationId: string,
  changes: { name?: string | undefined; slug?: string | undefined },
  ctx: RequestContext,
): Promise<Organization> {
  const { user } = signedIn;
  const set = { ...(changes.name === undefined ? {} : { name: changes.name }), ...(changes.slug === undefined ? {} : { slug: changes.slug }) };
  return withLockedActor(deps.stores, organizationId, user.id, async (tx, actor) => {
    assertManager(actor.role);
    const outcome = await tx.organizations.updateOrganization(organizationId, set, ctx.now);
    if (outcome === 'slug_taken') throw conflict('slug_taken', 'This slug is taken. Choose another.');
    const organization = await tx.organizations.findOrganization(organizationId);
    if (outcome === 'missing' || organization === null) throw notFound(NO_SUCH_ORGANIZATION);
    const facts = { organizationId, name: organization.name, slug: organization.slug };
    await recordAudit(tx.audit, ctx, 'org_updated', user.id, { ...facts, changed: Object.keys(set).join(',') });
    await emitEvent(tx, ctx.now, 'organization.updated', user, facts);
    return organization;
  });
}

/** An owner deletes it, re-authenticated: every member loses it, and the app tokens that named it. */
export async function deleteOrganization(
  deps: OrganizationDeps,
  signedIn: ValidSession,
  organizationId: string,
  input: { currentPassword?: string | undefined },
  ctx: RequestContext,
): Promise<void> {
  const { user } = signedIn;
  const { member } = await membershipOf(deps.stores, organizationId, user.id);
  assertOwner(member.role);
  await reauthenticate(deps, user, signedIn.session, input.currentPassword, ctx);
  // Checked again under the lock: an owner demoted meanwhile deletes nothing.
  if (!(await eraseOrganization(deps.stores, organizationId, { actor: user, ctx, onlyIfOwner: user.id }))) throw notFound(NO_SUCH_ORGANIZATION);
}

/** The deletion itself, shared with the operators' (`actor` null: the admin API or the CLI). False when it was gone. */
export async function eraseOrganization(
  stores: Stores,
  organizationId: string,
  // The command line has no client address: `ip` null there.
  by: {
    actor: { id: string; email: string | null } | null;
    ctx: Pick<RequestContext, 'now' | 'userAgent'> & { ip: string | null };
    auditMetadata?: Record<string, string>;
    /** A person who must still be an owner once the organization is locked (403 otherwise). */
    onlyIfOwner?: string;
  },
): Promise<boolean> {
  return stores.transaction(async (tx) => {
    if (!(await tx.organizations.lockOrganization(organizationId))) return false;
    const organization = await tx.organizations.findOrganization(organizationId);
    if (organization === null) return false;
    if (by.onlyIfOwner !== undefined) {
      const member = await tx.organizations.findMember(organizationId, by.onlyIfOwner);
      if (member === null) return false;
      assertOwner(member.role);
    }
    const members = await tx.organizations.listMembers(organizationId);
    for (const member of members) await tx.appAccess.revokeGrantsWithScope(member.userId, ORGANIZATIONS_SCOPE);
    await tx.organizations.deleteOrganization(organizationId);
    const facts = { organizationId, name: organization.name, slug: organization.slug };
    await tx.audit.recordEvent({
      type: 'org_deleted',
      userId: by.actor?.id ?? null,
      ip: by.ctx.ip,
      userAgent: by.ctx.userAgent,
      metadata: { ...facts, members: members.length, ...by.auditMetadata },
      at: by.ctx.now,
    });
    await emitEvent(tx, by.ctx.now, 'organization.deleted', by.actor, facts);
    return true;
  });
}

export async function listMembers(deps: Pick<OrganizationDeps, 'stores'>, userId: string, organizationId: string): Promise<Member[]> {
  await membershipOf(deps.stores, organizationId, userId);
  return deps.stores.organizations.listMembers(organizationId);
}

/**
 * Runs `change` in a transaction that first locks the organization's row, with the actor's
 * membership read under the lock (404 for a non-member): every change of an organization and its
 * members takes the same lock, so what `change` decides from the roles (may they? last owner?)
 * still holds when it writes, whatever runs at the same moment.
 */
export async function withLockedActor<T>(
  stores: Stores,
  organizationId: string,
  actorId: string,
  change: (tx: Stores, actor: Member, organization: Organization) => Promise<T>,
): Promise<T> {
  return stores.transaction(async (tx) => {
    if (!(await tx.organizations.lockOrganization(organizationId))) throw notFound(NO_SUCH_ORGANIZATION);
    const [organization, actor] = await Promise.all([tx.organizations.findOrganization(organizationId), tx.organizations.findMember(organizationId, actorId)]);
    if (organization === null || actor === null) throw notFound(NO_SUCH_ORGANIZATION);
    return change(tx, actor, organization);
  });
}

/** `withLockedActor`, with the member acted on read under the lock too (404 when not a member). */
async function withLockedMembers<T>(
  stores: Stores,
  ids: { organizationId: string; actorId: string; memberId: string },
  change: (tx: Stores, actor: Member, member: Member, organization: Organization) => Promise<T>,
): Promise<T> {
  return withLockedActor(stores, ids.organizationId, ids.actorId, async (tx, actor, organization) => {
    const member = ids.memberId === ids.actorId ? actor : await tx.organizations.findMember(ids.organizationId, ids.memberId);
    if (member === null) throw notFound('No such member in this organization.');
    return change(tx, actor, member, organization);
  });
}

export async function changeMemberRole(
  deps: OrganizationDeps,
  signedIn: ValidSession,
  target: { organizationId: string; userId: string; role: string },
  ctx: RequestContext,
): Promise<Member> {
  assertKnownRole(deps, target.role);
  const { organizationId } = target;
  return withLockedMembers(deps.stores, { organizationId, actorId: signedIn.user.id, memberId: target.userId }, async (tx, actor, member) => {
    assertMayAssign(actor.role, member.role, target.role);
    if (member.role === target.role) return member;
    if (member.role === 'owner' && (await tx.organizations.countOwners(organizationId)) <= 1) throw lastOwner();
    if (!(await tx.organizations.setMemberRole(organizationId, member.userId, target.role))) throw notFound('No such member in this organization.');
    await recordAudit(tx.audit, ctx, 'member_role_changed', actor.userId, {
      organizationId,
      memberId: member.userId,
      role: target.role,
      previousRole: member.role,
    });
    await emitEvent(tx, ctx.now, 'member.role_changed', subjectOf(member), {
      organizationId,
      role: target.role,
      previousRole: member.role,
      actor: actor.userId,
    });
    return { ...member, role: target.role };
  });
}

/**
 * An admin removes a member, or anyone leaves. The member loses the app grants whose tokens named
 * their organizations (they are re-issued, without this one, at the app's next sign-in).
 */
export async function removeMember(
  deps: OrganizationDeps,
  signedIn: ValidSession,
  target: { organizationId: string; userId: string },
  ctx: RequestContext,
): Promise<void> {
  const { organizationId } = target;
  await withLockedMembers(deps.stores, { organizationId, actorId: signedIn.user.id, memberId: target.userId }, async (tx, actor, member, organization) => {
    const self = actor.userId === member.userId;
    assertMayRemove(actor.role, member.role, self);
    // The last member leaving takes the organization along, as the deletion of their account does.
    if (self && (await tx.organizations.countMembers(organizationId)) === 1) {
      await tx.appAccess.revokeGrantsWithScope(member.userId, ORGANIZATIONS_SCOPE);
      await tx.organizations.deleteOrganization(organizationId);
      const facts = { organizationId, name: organization.name, slug: organization.slug };
      await recordAudit(tx.audit, ctx, 'org_deleted', actor.userId, { ...facts, members: 1, reason: 'last_member_left' });
      await emitEvent(tx, ctx.now, 'organization.deleted', subjectOf(member), facts);
      return;
    }
    if (member.role === 'owner' && (await tx.organizations.countOwners(organizationId)) <= 1) {
      throw lastOwner(self ? 'You are the only owner. Make someone else an owner first, or delete the organization.' : undefined);
    }
    await tx.organizations.removeMember(organizationId, member.userId);
    await tx.appAccess.revokeGrantsWithScope(member.userId, ORGANIZATIONS_SCOPE);
    await recordAudit(tx.audit, ctx, 'member_removed', actor.userId, { organizationId, memberId: member.userId, role: member.role, left: self });
    await emitEvent(tx, ctx.now, 'member.removed', subjectOf(member), { organizationId, role: member.role, actor: actor.userId });
  });
}

function subjectOf(member: Member): { id: string; email: string | null } {
  return { id: member.userId, email: member.email };
}
