/** @module What the organization flows ask of storage (implemented in db/organization-store.ts). */

export interface Organization {
  id: string;
  name: string;
  slug: string;
  createdAt: Date;
  updatedAt: Date;
}

/** One organization a person belongs to, with their role in it. */
export interface Membership {
  organization: Organization;
  role: string;
  joinedAt: Date;
}

export interface Member {
  userId: string;
  email: string | null;
  role: string;
  joinedAt: Date;
}

export interface Invitation {
  /** The `<id>` of the token `<id>.<secret>`. */
  id: string;
  organizationId: string;
  email: string;
  role: string;
  /** The user id of who invited (kept as it was if that account is deleted later). */
  invitedBy: string | null;
  expiresAt: Date;
  createdAt: Date;
}

/** One of a person's memberships, as their account's deletion sees it (read under the organization's lock). */
export interface LockedMembership {
  organizationId: string;
  role: string;
  /** The other owners and members besides this person. */
  otherOwners: number;
  otherMembers: number;
}

export interface OrganizationStore {
  /** Creates it with `ownerId` as its owner; false when the slug is taken (nothing written). */
  createOrganization(organization: Organization, ownerId: string): Promise<boolean>;
  slugTaken(slug: string): Promise<boolean>;
  findOrganization(id: string): Promise<Organization | null>;
  findOrganizationBySlug(slug: string): Promise<Organization | null>;
  /** 'slug_taken' when another organization has the new slug. */
  updateOrganization(id: string, changes: { name?: string; slug?: string }, now: Date): Promise<'updated' | 'missing' | 'slug_taken'>;
  deleteOrganization(id: string): Promise<boolean>;
  /**
   * Locks the organization's row until the transaction ends (PostgreSQL: `FOR UPDATE`; SQLite
   * runs one transaction at a time): every change of its members takes this first, so two
   * concurrent demotions cannot both see another owner. False when it does not exist.
   */
  lockOrganization(id: string): Promise<boolean>;
  /** The person's organizations, by name. */
  listMemberships(userId: string): Promise<Membership[]>;
  findMember(organizationId: string, userId: string): Promise<Member | null>;
  /** Oldest member first. */
  listMembers(organizationId: string): Promise<Member[]>;
  countOwners(organizationId: string): Promise<number>;
  countMembers(organizationId: string): Promise<number>;
  /** Adds the person; false when they are a member already (their role is kept). */
  addMember(organizationId: string, userId: string, role: string, now: Date): Promise<boolean>;
  setMemberRole(organizationId: string, userId: string, role: string): Promise<boolean>;
  removeMember(organizationId: string, userId: string): Promise<boolean>;
  /**
   * Locks every organization the person belongs to (in id order, so two deletions cannot
   * deadlock), then reads their role and the others under the locks: a promotion or a leave racing
   * the person's deletion is either before it or after it.
   */
  lockMemberships(userId: string): Promise<LockedMembership[]>;
  /** Replaces any invitation of the same organization and address. */
  replaceInvitation(invitation: Invitation, secretHash: string): Promise<void>;
  /** The unexpired invitations, newest first. */
  listInvitations(organizationId: string, now: Date): Promise<Invitation[]>;
  findInvitation(id: string): Promise<(Invitation & { secretHash: string }) | null>;
  /** The pending (or expired, not yet swept) invitation of this address into this organization. */
  findInvitationByEmail(organizationId: string, email: string): Promise<Invitation | null>;
  /** Deletes it; false when it was gone already (spent by another request, revoked). */
  deleteInvitation(id: string, organizationId?: string): Promise<boolean>;
  deleteExpiredInvitations(now: Date): Promise<number>;
  /** For operators: by name or slug containing `query`, oldest first, after the cursor. */
  searchOrganizations(input: {
    query: string | null;
    limit: number;
    after: { createdAt: Date; id: string } | null;
  }): Promise<(Organization & { members: number })[]>;
}
