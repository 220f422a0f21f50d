/**
 * @module The webhook event catalogue and how a flow reports a change: `emitEvent(tx, …)` in the
 * same transaction as the change, so the event exists exactly when the change does (a rolled-back
 * sign-up reports nothing; a committed one reports once). The store writes the event only when an
 * enabled endpoint wants it, and fans it out to those endpoints in the same statements.
 *
 * `data` carries ids, the address and the facts — never a password, token, code, secret or hash.
 */
import { randomUUID } from 'node:crypto';

/** What each event's `data` holds besides `userId` (and `email` where the user has one). */
export interface WebhookEventData {
  /** `method`: password, github, oidc:<id>, email, import. */
  'user.created': { method: string; emailVerified: boolean };
  'user.email_verified': Record<string, never>;
  'user.email_changed': { previousEmail: string | null };
  'user.password_changed': { how: 'change' | 'reset' };
  'user.mfa_enabled': { method: 'totp' };
  'user.mfa_disabled': { method: 'totp' };
  'user.passkey_added': { passkeyId: string; name: string };
  'user.passkey_removed': { passkeyId: string; name: string };
  'user.provider_linked': { provider: string; providerLogin: string | null };
  'user.provider_unlinked': { provider: string; providerLogin: string | null };
  /** The account's sign-in lock engaged after too many failures, until `lockedUntil` (ISO). */
  'user.locked': { lockedUntil: string };
  'user.disabled': { actor: string };
  'user.enabled': { actor: string };
  /** `reason`: deleted_by_owner, declined_from_verification_link, admin. */
  'user.deleted': { reason: string };
  /** `methods`: how the person proved who they are (`password`, `password+totp`, `passkey`, …). */
  'session.created': { sessionId: string; methods: string };
  'session.revoked': { sessionIds: string[]; reason: SessionRevokedReason };
  'organization.created': OrganizationFacts;
  'organization.updated': OrganizationFacts;
  'organization.deleted': OrganizationFacts;
  /** The member is the event's user; `actor` the user id of who acted (the member themself when they joined or left). */
  'member.added': { organizationId: string; role: string; actor: string | null };
  'member.removed': { organizationId: string; role: string; actor: string | null };
  'member.role_changed': { organizationId: string; role: string; previousRole: string; actor: string | null };
  /** About an address, not yet a user: the event has no user; `email` is the invited address. */
  'invitation.created': { organizationId: string; invitationId: string; email: string; role: string; invitedBy: string | null };
  /** The user who accepted is the event's user. */
  'invitation.accepted': { organizationId: string; invitationId: string; role: string };
  'invitation.revoked': { organizationId: string; invitationId: string; email: string; role: string; actor: string | null };
  'webhook.test': { webhookId: string };
}

/** An organization as its events carry it; the user of the event is who acted (null for an operator). */
export interface OrganizationFacts {
  organizationId: string;
  name: string;
  slug: string;
}

export type SessionRevokedReason = 'logout' | 'revoked' | 'revoked_others' | 'password_changed' | 'password_reset' | 'admin' | 'disabled' | 'deleted';

export type WebhookEventType = keyof WebhookEventData;

export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'user.created',
  'user.email_verified',
  'user.email_changed',
  'user.password_changed',
  'user.mfa_enabled',
  'user.mfa_disabled',
  'user.passkey_added',
  'user.passkey_removed',
  'user.provider_linked',
  'user.provider_unlinked',
  'user.locked',
  'user.disabled',
  'user.enabled',
  'user.deleted',
  'session.created',
  'session.revoked',
  'organization.created',
  'organization.updated',
  'organization.deleted',
  'member.added',
  'member.removed',
  'member.role_changed',
  'invitation.created',
  'invitation.accepted',
  'invitation.revoked',
  'webhook.test',
];

/** One event as stored: the body sent is `{ type, timestamp, data }`, signed under `id`. */
export interface WebhookEvent {
  /** The `webhook-id` of every attempt of every delivery of this event: `msg_<uuid>`. */
  id: string;
  type: WebhookEventType;
  userId: string | null;
  /** The exact JSON body sent. */
  payload: string;
  createdAt: Date;
}

export interface WebhookEventStore {
  /**
   * Writes the event and one pending delivery per enabled endpoint that wants its type, in the
   * store's transaction; writes nothing when no endpoint wants it. `onlyEndpointId` targets one
   * endpoint whatever its filter (`webhook.test`).
   */
  recordEvent(event: WebhookEvent, options?: { onlyEndpointId?: string }): Promise<void>;
}

/** Who the event is about: their id, and their address where they have one. */
export interface EventSubject {
  id: string;
  email: string | null;
}

/**
 * Reports a change: call it with the transaction's stores that made the change.
 *
 * @example
 * await stores.transaction(async (tx) => {
 *   const user = await tx.users.createUser(…);
 *   await emitEvent(tx, now, 'user.created', user, { method: 'password', emailVerified: false });
 * });
 */
export async function emitEvent<T extends WebhookEventType>(
  stores: { webhookEvents: WebhookEventStore },
  now: Date,
  type: T,
  subject: EventSubject | null,
  facts: WebhookEventData[T],
): Promise<void> {
  await stores.webhookEvents.recordEvent(buildEvent(now, type, subject, facts));
}

export function buildEvent<T extends WebhookEventType>(now: Date, type: T, subject: EventSubject | null, facts: WebhookEventData[T]): WebhookEvent {
  const data = subject === null ? { ...facts } : { userId: subject.id, ...(subject.email === null ? {} : { email: subject.email }), ...facts };
  return {
    id: `msg_${randomUUID().replaceAll('-', '')}`,
    type,
    userId: subject?.id ?? null,
    payload: JSON.stringify({ type, timestamp: now.toISOString(), data }),
    createdAt: now,
  };
}
