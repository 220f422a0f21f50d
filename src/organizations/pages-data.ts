/**
 * @module What the organization pages read (src/web): an organization as one of its members sees
 * it, and what an invitation link names. Both read only; neither spends an invitation, so a mail
 * scanner that follows the link changes nothing.
 */
import type { Stores } from '../stores.js';
import { findLiveInvitation } from './invitations.js';

/** An organization's id: a UUID (anything else names none, and never reaches the database). */
const ORGANIZATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface OrganizationPageData {
  id: string;
  name: string;
  slug: string;
  /** The reader's role in it. */
  role: string;
}

export interface InvitationPageData {
  email: string;
  role: string;
  organization: { id: string; name: string };
}

/** The organization with the reader's role; null when it does not exist or the reader is no member (the page is a 404 then). */
export async function organizationForMember(stores: Stores, organizationId: string, userId: string): Promise<OrganizationPageData | null> {
  if (!ORGANIZATION_ID.test(organizationId)) return null;
  const [organization, member] = await Promise.all([
    stores.organizations.findOrganization(organizationId),
    stores.organizations.findMember(organizationId, userId),
  ]);
  if (organization === null || member === null) return null;
  return { id: organization.id, name: organization.name, slug: organization.slug, role: member.role };
}

/** The live invitation a link's token names; null for an invalid, expired or spent one. Spends nothing. */
export async function describeInvitation(stores: Stores, token: string, now: Date): Promise<InvitationPageData | null> {
  const found = await findLiveInvitation({ stores }, token, now);
  if (found === null) return null;
  const { invitation, organization } = found;
  return { email: invitation.email, role: invitation.role, organization: { id: organization.id, name: organization.name } };
}
