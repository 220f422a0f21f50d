/**
 * @module The audit trail (SPEC §6): who, from where, when and why, for every authentication
 * event. Metadata holds emails, reasons and provider identities — never a password, token,
 * cookie or key.
 */

export type AuditEventType = 'user_created' | 'login_success' | 'login_failure' | 'config_updated' | 'account_deleted';

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
  /** Deletes the events recorded before `cutoff` (AUDIT_RETENTION_DAYS); returns how many. */
  deleteEventsBefore(cutoff: Date): Promise<number>;
}
