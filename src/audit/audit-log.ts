/**
 * @module The audit trail (SPEC §6): who, from where, when and why, for every authentication
 * event. Metadata holds emails, reasons and provider identities — never a password, token,
 * cookie or key.
 */

/** SPEC §6's five, the account self-service events of DESIGN §9.2, the two-factor ones of §9.3 and the operators' of §9.6. */
export type AuditEventType =
  | 'user_created'
  | 'login_success'
  | 'login_failure'
  | 'config_updated'
  | 'account_deleted'
  | 'logout'
  | 'session_revoked'
  | 'password_changed'
  | 'password_reset_completed'
  | 'email_change_requested'
  | 'email_changed'
  | 'provider_unlinked'
  | 'mfa_enabled'
  | 'mfa_disabled'
  | 'mfa_failure'
  | 'recovery_code_used'
  | 'recovery_codes_regenerated'
  | 'passkey_added'
  | 'passkey_removed'
  | 'passkey_renamed'
  // An operator's actions (DESIGN §9.6): `metadata.actor` says through what (`admin`: the admin
  // API, `cli`: the command line), `userId` is the account acted on.
  | 'admin_user_disabled'
  | 'admin_user_enabled'
  | 'admin_sessions_revoked'
  | 'admin_user_unlocked'
  | 'admin_user_deleted'
  // An operator lifted the login lock of a client address: `userId` null, `metadata.ip` the address.
  | 'admin_ip_unlocked'
  // Users brought in by an operator (`metadata`: the counts and `actor`), and a person's own data
  // taken out (user-transfer/).
  | 'users_imported'
  | 'account_exported'
  // Webhook endpoints (`metadata`: the endpoint's id and url, `actor`; never its secret):
  // `webhook_disabled` also by the delivery worker after 5 days of failures (`actor: system`).
  | 'webhook_created'
  | 'webhook_updated'
  | 'webhook_deleted'
  | 'webhook_secret_rotated'
  | 'webhook_disabled'
  // The OpenID Connect provider: clients registered by operators (`metadata`: clientId, name,
  // `actor`; never a secret), signing keys rotated or retired (`metadata`: the key ids), a person's
  // consent and its withdrawal (`userId` the person, `metadata.clientId`), and a refresh token
  // presented after it was used (`metadata.clientId`): its whole grant was revoked.
  | 'oidc_client_created'
  | 'oidc_client_updated'
  | 'oidc_client_deleted'
  | 'oidc_client_secret_rotated'
  | 'oidc_keys_rotated'
  | 'oidc_key_retired'
  | 'oidc_consent_granted'
  | 'oidc_grant_revoked'
  | 'oidc_refresh_reuse'
  // Organizations (`metadata.organizationId` on each; `userId` the person who acted, `memberId`
  // the member acted on, an invitation's `email` the address invited; never its token).
  | 'org_created'
  | 'org_updated'
  | 'org_deleted'
  | 'member_added'
  | 'member_removed'
  | 'member_role_changed'
  | 'invitation_created'
  | 'invitation_accepted'
  | 'invitation_revoked';

export type AuditMetadata = Record<string, string | number | boolean | null>;

export interface AuditEvent {
  type: AuditEventType;
  userId: string | null;
  ip: string | null;
  userAgent: string | null;
  metadata: AuditMetadata;
  at: Date;
}

export interface AuditStore {
  recordEvent(event: AuditEvent): Promise<void>;
  /** Newest first; for operators and tests (the spec has no endpoint for reading). */
  listRecentEvents(limit: number): Promise<AuditEvent[]>;
  /**
   * Removes the addresses from the metadata of the user's events — every `email`, `newEmail` and
   * `previousEmail` field, and any value equal to `email` — when an account is deleted: its rows
   * stay, keyed by the user id, without an address; returns how many rows changed.
   */
  forgetEmail(userId: string, email: string): Promise<number>;
  /** Deletes the events recorded before `cutoff` (AUDIT_RETENTION_DAYS); returns how many. */
  deleteEventsBefore(cutoff: Date): Promise<number>;
}
