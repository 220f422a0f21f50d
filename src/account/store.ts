/** @module Storage verbs for pending email changes (DESIGN §9.2). Rows hold a SHA-256 of the token's secret, never the token. */

export interface EmailChangeRecord {
  /** The `<id>` half of the token. */
  id: string;
  userId: string;
  /** Trimmed and lower-cased, as every stored email. */
  newEmail: string;
  /** SHA-256 (hex) of the `<secret>` half. */
  secretHash: string;
  expiresAt: Date;
  createdAt: Date;
}

export interface EmailChangeTokenStore {
  /** Deletes the user's earlier pending changes, then stores this one: only the newest link works. */
  replaceEmailChangeToken(record: EmailChangeRecord): Promise<void>;
  findEmailChangeToken(id: string): Promise<EmailChangeRecord | null>;
  /** True only for the one caller that deleted it (races: a token is spent exactly once). */
  deleteEmailChangeToken(id: string): Promise<boolean>;
  /** Deletes every pending change of the user (its password was reset or changed, its sessions ended, or its account secured). */
  deleteUserEmailChangeTokens(userId: string): Promise<void>;
  /** The addresses the user's pending changes would move to (their queued links are purged with the account). */
  listPendingEmails(userId: string): Promise<string[]>;
  /** Deletes the tokens expired at `now`; returns how many. */
  deleteExpiredEmailChangeTokens(now: Date): Promise<number>;
}
