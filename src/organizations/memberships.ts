/**
 * @module A person's organizations as apps read them — from `GET /api/orgs` and from the
 * `organizations` claim of OpenID Connect tokens — and what an account's deletion does to the
 * organizations it owns. Both read the membership table only when asked: the session check never
 * does.
 */
import type { AuditMetadata } from '../audit/audit-log.js';
import { emitEvent } from '../webhooks/events.js';
import type { Stores } from '../stores.js';
import { lastOwner } from './rights.js';

/** An organization as a member sees it in lists and tokens. */
export interface MembershipClaim {
  id: string;
  name: string;
  slug: string;
  role: string;
  /** The role's permission strings from ORG_ROLES_FILE; `[]` for owner, admin and member. */
  permissions: readonly string[];
}

export async function membershipsOf(
  organizations: Stores['organizations'],
  roles: ReadonlyMap<string, readonly string[]>,
  userId: string,
): Promise<MembershipClaim[]> {
  const memberships = await organizations.listMemberships(userId);
  return memberships.map(({ organization, role }) => ({
    id: organization.id,
    name: organization.name,
    slug: organization.slug,
    role,
    // A role taken out of ORG_ROLES_FILE keeps its members, with no permissions.
    permissions: roles.get(role) ?? [],
  }));
}

/**
 * Before an account is deleted, in its transaction, with every organization it belongs to locked:
 * one where it is the sole member goes with it; one where it is the only owner while others remain
 * refuses the deletion (409 `last_owner`) — someone else must be made an owner first. Each other
 * membership ends as a removal does (`member_removed`, `member.removed`; the row goes with the user).
 *
 * `handOver` instead passes ownership to the longest-standing other member: for an account deleted
 * from outside (declined from the verification link by the address's owner), which its creator
 * must not be able to keep alive by founding an organization.
 */
export async function releaseOrganizations(
  tx: Stores,
  user: { id: string; email: string | null },
  now: Date,
  options: { handOver?: boolean } = {},
): Promise<void> {
  for (const membership of await tx.organizations.lockMemberships(user.id)) {
    const { organizationId, role } = membership;
    const audit = (type: 'org_deleted' | 'member_removed' | 'member_role_changed', userId: string | null, metadata: AuditMetadata) =>
      tx.audit.recordEvent({ type, userId, ip: null, userAgent: null, metadata: { organizationId, ...metadata }, at: now });
    if (membership.otherMembers === 0) {
      const organization = await tx.organizations.findOrganization(organizationId);
      if (organization === null) continue;
      await tx.organizations.deleteOrganization(organizationId);
      const facts = { organizationId, name: organization.name, slug: organization.slug };
      await audit('org_deleted', user.id, { ...facts, reason: 'account_deleted' });
      await emitEvent(tx, now, 'organization.deleted', user, facts);
      continue;
    }
    if (role === 'owner' && membership.otherOwners === 0) {
      if (options.handOver !== true) {
        throw lastOwner('This account is the only owner of an organization that has other members. Make someone else an owner there first, or delete it.');
      }
      await handOverOwnership(tx, organizationId, user.id, now);
    }
    await audit('member_removed', user.id, { memberId: user.id, role, reason: 'account_deleted' });
    await emitEvent(tx, now, 'member.removed', user, { organizationId, role, actor: user.id });
  }
}

/** The longest-standing other member becomes an owner (audited with no actor: no person chose it). */
async function handOverOwnership(tx: Stores, organizationId: string, leavingUserId: string, now: Date): Promise<void> {
  const heir = (await tx.organizations.listMembers(organizationId)).find((member) => member.userId !== leavingUserId);
  if (heir === undefined) return;
  await tx.organizations.setMemberRole(organizationId, heir.userId, 'owner');
  const facts = { organizationId, role: 'owner', previousRole: heir.role };
  await tx.audit.recordEvent({
    type: 'member_role_changed',
    userId: null,
    ip: null,
    userAgent: null,
    metadata: { ...facts, memberId: heir.userId, reason: 'owner_deleted' },
    at: now,
  });
  await emitEvent(tx, now, 'member.role_changed', { id: heir.userId, email: heir.email }, { ...facts, actor: null });
}
