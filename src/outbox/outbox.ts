/**
 * @module The email queue (SPEC §1: "email delivery is only queued"). An email is queued in the
 * same transaction as the token it carries. A row that carries a link loses it once the email is
 * sent or once its token has expired: the database keeps no usable token longer than needed.
 */

export type EmailTemplate =
  | 'email_verification'
  | 'password_reset'
  | 'provider_linked'
  | 'password_changed'
  | 'account_locked'
  | 'email_change'
  | 'email_change_requested'
  | 'email_changed'
  | 'email_sign_in'
  | 'account_secured'
  | 'organization_invitation';

export type OutboxStatus = 'queued' | 'sending' | 'sent' | 'dead' | 'expired';

export interface QueuedEmail {
  id: string;
  recipient: string;
  template: EmailTemplate;
  subject: string;
  /** null once purged (sent, dead or expired). */
  text: string | null;
  html: string | null;
  status: OutboxStatus;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
  /** When the link inside stops working; the row is purged then. */
  expiresAt: Date | null;
  sentAt: Date | null;
}

export interface NewEmail {
  id: string;
  recipient: string;
  template: EmailTemplate;
  subject: string;
  text: string;
  html: string;
  createdAt: Date;
  expiresAt: Date | null;
}

export interface OutboxStore {
  enqueueEmail(email: NewEmail): Promise<void>;
  /**
   * Claims up to `limit` due emails, oldest first, for one sender until `now + leaseMs`. No two
   * senders get the same row (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: one writer at a time).
   * A row whose lease ran out (its sender died mid-send) is due again.
   */
  claimDueEmails(now: Date, limit: number, leaseMs: number): Promise<QueuedEmail[]>;
  /** Marks sent and drops the body (and the link in it). */
  markEmailSent(id: string, at: Date): Promise<void>;
  /** Counts a failed attempt; after `maxAttempts` the row is dead and its body dropped. */
  recordEmailFailure(id: string, error: string, nextAttemptAt: Date, maxAttempts: number): Promise<void>;
  /** Drops the body of queued emails whose link has expired; returns how many. */
  expireStaleEmails(now: Date): Promise<number>;
  /** Drops the body of every email still queued for `recipient` (an account that is gone); returns how many. */
  expireQueuedEmailsTo(recipient: string): Promise<number>;
  listEmails(limit: number): Promise<QueuedEmail[]>;
}

/** Sends one email. The default outside production prints it; SMTP comes with its own sender. */
export interface Mailer {
  send(email: { to: string; subject: string; text: string; html: string | null }): Promise<void>;
  close?(): Promise<void>;
}
