/**
 * @module A person's organizations as apps read them — from `GET /api/orgs` and from the
 * `organizations` claim of OpenID Connect tokens — and what an account's deletion does to the
 * organizations it owns. Both read the membership table only when asked: the session check never
 * does.
 */
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
 * Before an account is deleted, in its transaction: an organization where it is the sole member
 * goes with it; one where it is the only owner while others remain refuses the deletion (409
 * `last_owner`) — someone else must be made an owner first. Rows are locked (two owners deleting
 * their accounts at once cannot both see the other).
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
  for (const ownership of await tx.organizations.lockOwnerships(user.id)) {
    if (ownership.otherMembers === 0) {
      const organization = await tx.organizations.findOrganization(ownership.organizationId);
      if (organization === null) continue;
      await tx.organizations.deleteOrganization(organization.id);
      const facts = { organizationId: organization.id, name: organization.name, slug: organization.slug };
      await tx.audit.recordEvent({
        type: 'org_deleted',
        userId: user.id,
        ip: null,
        userAgent: null,
        metadata: { ...facts, reason: 'account_deleted' },
        at: now,
      });
      await emitEvent(tx, now, 'organization.deleted', user, facts);
    } else if (ownership.otherOwners === 0 && options.handOver === true) {
      const heir = (await tx.organizations.listMembers(ownership.organizationId)).find((member) => member.userId !== user.id);
      if (heir === undefined) continue;
      await tx.organizations.setMemberRole(ownership.organizationId, heir.userId, 'owner');
      const facts = { organizationId: ownership.organizationId, role: 'owner', previousRole: heir.role };
      await tx.audit.recordEvent({
        type: 'member_role_changed',
        userId: null,
        ip: null,
        userAgent: null,
        metadata: { ...facts, memberId: heir.userId, reason: 'owner_deleted' },
        at: now,
      });
      await emitEvent(tx, now, 'member.role_changed', { id: heir.userId, email: heir.email }, { ...facts, actor: null });
    } else if (ownership.otherOwners === 0) {
      throw lastOwner('This account is the only owner of an organization that has other members. Make someone else an owner there first, or delete it.');
    }
  }
}
