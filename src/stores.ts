/**
 * @module Every storage interface the flows use, and transactions across them. A flow that must
 * write several tables atomically (a user, its verification token and the queued email) asks
 * for `transaction` and gets the same stores bound to one transaction. Implemented in `db/`.
 */
import type { EmailChangeTokenStore } from './account/store.js';
import type { AuditStore } from './audit/audit-log.js';
import type { EmailSignInStore } from './email-sign-in/store.js';
import type { VerificationTokenStore } from './email-verification/store.js';
import type { RecoveryCodeStore, TotpStore } from './mfa/store.js';
import type { AccountStore } from './oauth/store.js';
import type { AppAccessStore } from './oidc-provider/store.js';
import type { OrganizationStore } from './organizations/store.js';
import type { OutboxStore } from './outbox/outbox.js';
import type { PasskeyStore } from './passkeys/store.js';
import type { ResetTokenStore } from './password-reset/store.js';
import type { SessionStore } from './session/store.js';
import type { UserStore } from './users/user.js';
import type { WebhookEventStore } from './webhooks/events.js';

export interface Stores {
  users: UserStore;
  sessions: SessionStore;
  audit: AuditStore;
  verificationTokens: VerificationTokenStore;
  resetTokens: ResetTokenStore;
  outbox: OutboxStore;
  accounts: AccountStore;
  emailChangeTokens: EmailChangeTokenStore;
  totp: TotpStore;
  recoveryCodes: RecoveryCodeStore;
  emailSignIns: EmailSignInStore;
  passkeys: PasskeyStore;
  /** Webhook events, written in the transaction of the change they report (webhooks/events.ts). */
  webhookEvents: WebhookEventStore;
  /** The OpenID Connect grants and tokens of an account, revoked when it is disabled, reset or deleted. */
  appAccess: AppAccessStore;
  /** Organizations, their members and invitations (organizations/). */
  organizations: OrganizationStore;
  /** Runs `work` in one transaction; nested calls join the outer one. */
  transaction<T>(work: (stores: Stores) => Promise<T>): Promise<T>;
}
