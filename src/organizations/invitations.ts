/**
 * @module Invitations into an organization: an admin (or owner) invites an address with a role;
 * the email links `{BASE_URL}/accept-invitation?token=<id>.<secret>`; the person signs in (or
 * registers) with that very address, verified, and accepts. The token works once, for 7 days, and
 * only its secret's SHA-256 is stored; inviting the same address again replaces the invitation.
 * Reading an invitation for the page spends nothing: only the accept request does.
 */
import { recordAudit } from '../audit/record.js';
import { hexDigestsEqual, sha256Hex } from '../crypto/digest.js';
import { createOneTimeToken, parseOneTimeToken } from '../crypto/one-time-token.js';
import { AppError, badRequest, forbidden, notFound, validationError } from '../errors.js';
import type { Language } from '../i18n/languages.js';
import { queueEmail } from '../outbox/queue.js';
import { renderOrganizationInvitationEmail } from '../outbox/templates.js';
import type { TemplateOverrides } from '../outbox/template-overrides.js';
import type { RandomReader } from '../random.js';
import type { RequestContext } from '../request-context.js';
import type { ValidSession } from '../session/flow.js';
import type { Stores } from '../stores.js';
import { emitEvent } from '../webhooks/events.js';
import { assertKnownRole, membershipOf, withLockedActor, type OrganizationDeps } from './flow.js';
import { assertMayAssign, assertManager } from './rights.js';
import type { Invitation, Organization } from './store.js';

export const INVITATION_LIFETIME_DAYS = 7;
const INVITATION_LIFETIME_MS = INVITATION_LIFETIME_DAYS * 24 * 60 * 60 * 1000;
const INVALID_INVITATION = 'This invitation is invalid, expired or already used. Ask for a new one.';

export interface InvitationDeps extends OrganizationDeps {
  random: RandomReader;
  baseUrl: string;
  appName: string;
  defaultLanguage: Language;
  emailTemplates: TemplateOverrides | null;
  /** Wakes the email pump. */
  onEmailQueued: () => void;
}

export function invitationView(invitation: Invitation): { id: string; email: string; role: string; expiresAt: string; invitedBy: string | null } {
  return { id: invitation.id, email: invitation.email, role: invitation.role, expiresAt: invitation.expiresAt.toISOString(), invitedBy: invitation.invitedBy };
}

export function invitationUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/accept-invitation?token=${encodeURIComponent(token)}`;
}

export async function createInvitation(
  deps: InvitationDeps,
  signedIn: ValidSession,
  input: { organizationId: string; email: string; role: string },
  ctx: RequestContext,
): Promise<{ invitation: Invitation; token: string; url: string }> {
  const { user } = signedIn;
  const { member } = await membershipOf(deps.stores, input.organizationId, user.id);
  assertManager(member.role);
  assertKnownRole(deps, input.role);
  assertMayAssign(member.role, null, input.role);
  // Each invitation is an email with a name the inviter chose: only a proven address sends them.
  if (!user.emailVerified) throw forbidden('email_not_verified', 'Verify your email address first, then invite people.');
  await deps.limits.consume('orgInvitation', { userId: user.id }, ctx.now);
  await deps.limits.consume('orgInvitation', { organization: input.organizationId }, ctx.now);
  const invitee = await deps.stores.users.findUserByEmail(input.email);
  const { id, secret, token } = createOneTimeToken(deps.random);
  const url = invitationUrl(deps.baseUrl, token);
  const invitation = await withLockedActor(deps.stores, input.organizationId, user.id, async (tx, actor, organization) => {
    // The rights again, under the lock: a demotion a moment ago counts.
    assertMayAssign(actor.role, null, input.role);
    if (invitee !== null && (await tx.organizations.findMember(organization.id, invitee.id)) !== null) {
      throw validationError([{ path: 'email', message: 'is already a member of this organization' }]);
    }
    const previous = await tx.organizations.findInvitationByEmail(organization.id, input.email);
    // An expired one is gone already, whatever it offered.
    const replaced = previous !== null && previous.expiresAt.getTime() > ctx.now.getTime() ? previous : null;
    // Replacing an invitation withdraws it: only who may withdraw it (an owner, for an owner's) may.
    if (replaced !== null) assertMayAssign(actor.role, null, replaced.role);
    const created: Invitation = {
      id,
      organizationId: organization.id,
      email: input.email,
      role: input.role,
      invitedBy: user.id,
      expiresAt: new Date(ctx.now.getTime() + INVITATION_LIFETIME_MS),
      createdAt: ctx.now,
    };
    await tx.organizations.replaceInvitation(created, sha256Hex(secret));
    if (replaced !== null) await recordRevoked(tx, ctx, replaced, user.id, 'replaced');
    const email = renderOrganizationInvitationEmail({
      appName: deps.appName,
      url,
      organization: organization.name,
      role: input.role,
      lifetimeDays: INVITATION_LIFETIME_DAYS,
      // The invitee's own language when they have an account; else the deployment's.
      language: invitee?.language ?? null,
      defaultLanguage: deps.defaultLanguage,
      emailTemplates: deps.emailTemplates,
    });
    await queueEmail(tx.outbox, input.email, email, { now: ctx.now, linkExpiresAt: created.expiresAt });
    const facts = { organizationId: organization.id, invitationId: id, email: input.email, role: input.role };
    await recordAudit(tx.audit, ctx, 'invitation_created', user.id, facts);
    await emitEvent(tx, ctx.now, 'invitation.created', null, { ...facts, invitedBy: user.id });
    return created;
  });
  deps.onEmailQueued();
  return { invitation, token, url };
}

/** The audit row and event of an invitation withdrawn (revoked, or replaced by a new one). */
async function recordRevoked(tx: Stores, ctx: RequestContext, invitation: Invitation, actorId: string, reason: 'revoked' | 'replaced'): Promise<void> {
  const facts = { organizationId: invitation.organizationId, invitationId: invitation.id, email: invitation.email, role: invitation.role };
  await recordAudit(tx.audit, ctx, 'invitation_revoked', actorId, { ...facts, reason });
  await emitEvent(tx, ctx.now, 'invitation.revoked', null, { ...facts, actor: actorId });
}

/** Admins and owners see the pending invitations; members do not (403), outsiders get 404. */
export async function listInvitations(deps: Pick<OrganizationDeps, 'stores'>, userId: string, organizationId: string, now: Date): Promise<Invitation[]> {
  const { member } = await membershipOf(deps.stores, organizationId, userId);
  assertManager(member.role);
  return deps.stores.organizations.listInvitations(organizationId, now);
}

export async function revokeInvitation(
  deps: Pick<OrganizationDeps, 'stores'>,
  signedIn: ValidSession,
  target: { organizationId: string; invitationId: string },
  ctx: RequestContext,
): Promise<void> {
  await withLockedActor(deps.stores, target.organizationId, signedIn.user.id, async (tx, actor) => {
    assertManager(actor.role);
    const invitation = await tx.organizations.findInvitation(target.invitationId);
    if (invitation === null || invitation.organizationId !== target.organizationId) throw notFound('No such invitation.');
    // Only an owner may withdraw an invitation to become an owner, as only an owner may send one.
    assertMayAssign(actor.role, null, invitation.role);
    if (!(await tx.organizations.deleteInvitation(invitation.id, target.organizationId))) throw notFound('No such invitation.');
    await recordRevoked(tx, ctx, invitation, actor.userId, 'revoked');
  });
}

/** The invitation a token names, unspent and unexpired; null for anything else. Spends nothing. */
export async function findLiveInvitation(
  deps: Pick<OrganizationDeps, 'stores'>,
  token: string,
  now: Date,
): Promise<{ invitation: Invitation; organization: Organization } | null> {
  const parts = parseOneTimeToken(token);
  if (parts === null) return null;
  const invitation = await deps.stores.organizations.findInvitation(parts.id);
  if (invitation === null || !hexDigestsEqual(invitation.secretHash, sha256Hex(parts.secret))) return null;
  if (invitation.expiresAt.getTime() <= now.getTime()) return null;
  const organization = await deps.stores.organizations.findOrganization(invitation.organizationId);
  return organization === null ? null : { invitation, organization };
}

/**
 * Accepts with the signed-in account: its address must be the invited one (403
 * `invitation_email_mismatch`) and verified (403 `email_not_verified`). The token is spent in the
 * transaction that adds the member; of two requests racing, one joins and the other gets 400.
 */
export async function acceptInvitation(
  deps: OrganizationDeps,
  signedIn: ValidSession,
  token: string,
  ctx: RequestContext,
): Promise<{ organization: Organization; role: string }> {
  const { user } = signedIn;
  await deps.limits.consume('orgInvitationAccept', { ip: ctx.ip }, ctx.now);
  await deps.limits.consume('orgInvitationAccept', { userId: user.id }, ctx.now);
  const found = await findLiveInvitation(deps, token, ctx.now);
  if (found === null) throw badRequest('invalid_token', INVALID_INVITATION);
  const { invitation, organization } = found;
  if (user.email !== invitation.email) {
    throw forbidden('invitation_email_mismatch', 'This invitation was sent to another email address. Sign in with that address to accept it.');
  }
  if (!user.emailVerified) throw forbidden('email_not_verified', 'Verify your email address first, then accept the invitation.');
  // A role taken out of ORG_ROLES_FILE since the invitation was sent is given to no one.
  if (!deps.roles.has(invitation.role)) throw badRequest('invalid_token', INVALID_INVITATION);
  return deps.stores.transaction(async (tx) => {
    // Deleted meanwhile: the invitation went with it.
    if (!(await tx.organizations.lockOrganization(organization.id))) throw badRequest('invalid_token', INVALID_INVITATION);
    if (!(await tx.organizations.deleteInvitation(invitation.id))) throw badRequest('invalid_token', INVALID_INVITATION);
    const added = await tx.organizations.addMember(organization.id, user.id, invitation.role, ctx.now);
    const member = await tx.organizations.findMember(organization.id, user.id);
    if (member === null) throw new AppError('internal_error', 500, 'The membership just written is not there.');
    const facts = { organizationId: organization.id, invitationId: invitation.id, role: member.role };
    await recordAudit(tx.audit, ctx, 'invitation_accepted', user.id, facts);
    await emitEvent(tx, ctx.now, 'invitation.accepted', user, facts);
    if (added) {
      await recordAudit(tx.audit, ctx, 'member_added', user.id, {
        organizationId: organization.id,
        memberId: user.id,
        role: member.role,
        invitationId: invitation.id,
      });
      await emitEvent(tx, ctx.now, 'member.added', user, { organizationId: organization.id, role: member.role, actor: user.id });
    }
    return { organization, role: member.role };
  });
}
