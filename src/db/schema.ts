/**
 * @module Kysely table types. These row shapes never leave `db/`: the stores turn them into
 * domain types. Times are epoch milliseconds in BIGINT columns on both dialects; booleans are
 * 0/1 integers, because SQLite has no boolean type and one migration set serves both.
 */
import type { Generated } from 'kysely';

export interface UsersTable {
  id: string;
  /** Trimmed and lower-cased; unique; null for a provider-only user without a verified email. */
  email: string | null;
  /** bcrypt hash; null for a user who signs in only through a provider. */
  password_hash: string | null;
  email_verified: number;
  /** JSON object: user-facing preferences (the spec's temporary fields live in columns). */
  preferences: string;
  created_at: number;
  last_login_at: number | null;
  /** When an operator disabled the account (migration 011); null: not disabled. */
  disabled_at: number | null;
  /** 1: the password was chosen before the address was proved (migration 012, users/secure-unverified.ts). */
  password_unproven: number;
  /** The id another system knew the user by, from an import (migration 014); unique; null for most. */
  external_id: string | null;
  /** The account's language (migration 017, src/i18n/languages.ts); null: DEFAULT_LANGUAGE. */
  language: string | null;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  /** SHA-256 (hex) of the session JWT: the row alone cannot be replayed as a cookie. */
  token_hash: string;
  expires_at: number;
  created_at: number;
  /** The client's IP and user agent at sign-in, shown in the session list (migration 007). */
  ip: string | null;
  user_agent: string | null;
  /** Refreshed at most once a minute; null for rows older than migration 007. */
  last_seen_at: number | null;
  /** How the sign-in was proven, comma-separated (`password,totp`); '' for rows older than migration 008. */
  methods: Generated<string>;
}

export interface AuditEventsTable {
  id: Generated<number>;
  event_type: string;
  user_id: string | null;
  ip: string | null;
  user_agent: string | null;
  /** JSON object; never a password, token or cookie. */
  metadata: string;
  created_at: number;
}

export interface EmailVerificationTokensTable {
  /** The `<id>` half of the token. */
  id: string;
  user_id: string;
  /** SHA-256 (hex) of the `<secret>` half. */
  secret_hash: string;
  expires_at: number;
  created_at: number;
}

export interface PasswordResetTokensTable {
  id: string;
  user_id: string;
  /** bcrypt hash (10 rounds) of the `<secret>` half (SPEC §2). */
  secret_hash: string;
  expires_at: number;
  created_at: number;
  used_at: number | null;
}

export interface EmailOutboxTable {
  id: string;
  recipient: string;
  template: string;
  subject: string;
  /** Carries the link until sent or expired, then null. */
  body_text: string | null;
  body_html: string | null;
  status: string;
  attempts: number;
  last_error: string | null;
  next_attempt_at: number;
  created_at: number;
  expires_at: number | null;
  sent_at: number | null;
  /** The sender that holds this row while `status` is 'sending'. */
  claim_id: string | null;
  locked_until: number | null;
}

export interface AccountsTable {
  id: string;
  user_id: string;
  provider: string;
  provider_account_id: string;
  provider_login: string;
  /** AES-256-GCM envelopes (crypto/envelope.ts); never a plain provider token. */
  access_token_enc: string;
  refresh_token_enc: string | null;
  access_token_expires_at: number | null;
  scope: string;
  created_at: number;
  updated_at: number;
}

/** A pending change of a user's email address (migration 007). */
export interface EmailChangeTokensTable {
  /** The `<id>` half of the token. */
  id: string;
  user_id: string;
  new_email: string;
  /** SHA-256 (hex) of the `<secret>` half. */
  secret_hash: string;
  expires_at: number;
  created_at: number;
}

/** A pending sign-in by email (migration 009): one per address, link and code together. */
export interface EmailSignInTokensTable {
  /** The `<id>` half of the link's token. */
  id: string;
  /** The address it was mailed to (lower-cased); unique: a newer request replaces the row. */
  email: string;
  /** null: no account yet (EMAIL_SIGN_IN_SIGNUP), created on first use. */
  user_id: string | null;
  /** SHA-256 (hex) of the `<secret>` half. */
  secret_hash: string;
  /** HMAC-SHA-256 (hex) of the code under a key derived from JWT_SECRET. */
  code_mac: string;
  code_attempts: Generated<number>;
  return_to: string | null;
  expires_at: number;
  created_at: number;
}

/** A user's TOTP secret (migration 008): enforced once `enabled_at` is set. */
export interface UserTotpTable {
  user_id: string;
  /** AES-256-GCM envelope of the base32 secret (crypto/envelope.ts). */
  secret_enc: string;
  enabled_at: number | null;
  /** The last 30-second step whose code was accepted: that step and earlier ones are spent. */
  last_used_step: number | null;
  created_at: number;
}

export interface RecoveryCodesTable {
  id: string;
  user_id: string;
  /** SHA-256 (hex) of the normalised code. */
  code_hash: string;
  used_at: number | null;
  created_at: number;
}

/** A passkey (WebAuthn credential) of a user (migration 010). */
export interface PasskeysTable {
  id: string;
  user_id: string;
  /** base64url; unique. */
  credential_id: string;
  /** The COSE public key, base64url. */
  public_key: string;
  counter: number;
  /** Comma-separated (`internal,hybrid`). */
  transports: Generated<string>;
  name: string;
  created_at: number;
  last_used_at: number | null;
}

/** A provider sign-in already used: the SHA-256 of its state, until the sign-in would have expired (migration 006). */
export interface OAuthConsumedSignInsTable {
  state_hash: string;
  expires_at: number;
}

/**
 * A provider link waiting for its sign-in's second factor, keyed by the challenge id (migration
 * 013): the `accounts` row to be, its token envelopes bound to `account_id` as there.
 */
export interface OAuthPendingLinksTable extends Omit<AccountsTable, 'id' | 'updated_at'> {
  challenge_id: string;
  account_id: string;
  expires_at: number;
}

export interface WebhookEndpointsTable {
  id: string;
  url: string;
  /** The filter as `,type,type,` or `,*,` (016-webhooks.ts). */
  events: string;
  description: string | null;
  secret_sealed: string;
  /** The secret before the last rotation, still signing beside the new one until `previous_secret_until`. */
  previous_secret_sealed: string | null;
  previous_secret_until: number | null;
  disabled_at: number | null;
  disabled_reason: string | null;
  /** When the current run of failed attempts began; null after a success. */
  failing_since: number | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookEventsTable {
  id: string;
  type: string;
  user_id: string | null;
  /** The JSON body sent: `{ type, timestamp, data }`. */
  payload: string;
  created_at: number;
}

export interface WebhookDeliveriesTable {
  seq: Generated<number>;
  id: string;
  event_id: string;
  endpoint_id: string;
  user_id: string | null;
  status: string;
  attempt_count: Generated<number>;
  next_attempt_at: number | null;
  claim_id: string | null;
  locked_until: number | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookDeliveryAttemptsTable {
  id: Generated<number>;
  delivery_id: string;
  at: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

/** What the OpenID Connect engine stores, under the SHA-256 of each record's id (018-oidc-provider.ts). */
export interface OidcRecordsTable {
  model: string;
  id: string;
  /** The engine's payload as JSON, without the id itself. */
  payload: string;
  grant_id: string | null;
  user_code: string | null;
  uid: string | null;
  account_id: string | null;
  client_id: string | null;
  expires_at: number | null;
  consumed_at: number | null;
  /** A grant's scopes as ` openid organizations ` (null on other records): 019-organizations. */
  scope: string | null;
}

export interface OrganizationsTable {
  id: string;
  name: string;
  /** Unique, lower-case `[a-z0-9-]`. */
  slug: string;
  created_at: number;
  updated_at: number;
}

export interface OrganizationMembersTable {
  organization_id: string;
  user_id: string;
  /** owner, admin, member, or a role of ORG_ROLES_FILE. */
  role: string;
  joined_at: number;
}

export interface OrganizationInvitationsTable {
  /** The `<id>` part of the token `<id>.<secret>`. */
  id: string;
  organization_id: string;
  /** Lower-cased; one pending invitation per organization and address. */
  email: string;
  role: string;
  /** SHA-256 (hex) of the token's secret. */
  secret_hash: string;
  invited_by: string | null;
  expires_at: number;
  created_at: number;
}

export interface OidcSigningKeysTable {
  kid: string;
  alg: string;
  public_jwk: string;
  /** The private JWK sealed with the envelope, bound to `kid`. */
  private_jwk_sealed: string;
  created_at: number;
  /** Published from `created_at`, signing from here (a rotation's delay). */
  signs_from: number;
  retired_at: number | null;
}

export interface OidcClientsTable {
  client_id: string;
  name: string;
  /** SHA-256 (hex) of a confidential client's secret; null for a public client. */
  secret_hash: string | null;
  /** The rest of the registration as JSON (oidc-provider/clients.ts, ClientRegistration). */
  registration: string;
  created_at: number;
  updated_at: number;
}

/** A back-channel logout owed to a client (018-oidc-provider.ts). */
export interface OidcLogoutNoticesTable {
  id: string;
  client_id: string;
  account_id: string;
  /** pending, delivered or failed. */
  status: string;
  attempts: Generated<number>;
  next_attempt_at: number;
  /** A worker's claim on it until then. */
  locked_until: number | null;
  last_error: string | null;
  created_at: number;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  audit_events: AuditEventsTable;
  email_verification_tokens: EmailVerificationTokensTable;
  password_reset_tokens: PasswordResetTokensTable;
  email_outbox: EmailOutboxTable;
  accounts: AccountsTable;
  oauth_consumed_sign_ins: OAuthConsumedSignInsTable;
  oauth_pending_links: OAuthPendingLinksTable;
  email_change_tokens: EmailChangeTokensTable;
  user_totp: UserTotpTable;
  recovery_codes: RecoveryCodesTable;
  email_sign_in_tokens: EmailSignInTokensTable;
  passkeys: PasskeysTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  oidc_records: OidcRecordsTable;
  oidc_signing_keys: OidcSigningKeysTable;
  oidc_clients: OidcClientsTable;
  oidc_logout_notices: OidcLogoutNoticesTable;
  organizations: OrganizationsTable;
  organization_members: OrganizationMembersTable;
  organization_invitations: OrganizationInvitationsTable;
}
