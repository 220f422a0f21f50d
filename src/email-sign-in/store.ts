/** @module Storage verbs for pending sign-ins by email: one row per address, link and code together. */

export interface EmailSignInRecord {
  /** The `<id>` half of the link's token. */
  id: string;
  /** Lower-cased; one pending sign-in per address. */
  email: string;
  /** null: no account yet (EMAIL_SIGN_IN_SIGNUP); it is created on first use. */
  userId: string | null;
  /** SHA-256 (hex) of the link's secret. */
  secretHash: string;
  /** HMAC-SHA-256 (hex) of the code under the server's code key: never the code itself. */
  codeMac: string;
  /** Wrong codes tried so far; at MAX_CODE_ATTEMPTS the code is dead (the link still works). */
  codeAttempts: number;
  returnTo: string | null;
  expiresAt: Date;
  createdAt: Date;
}

export interface EmailSignInStore {
  /**
   * Replaces the address's pending sign-in with this one (only the newest link and code work) and
   * drops the body of the sign-in emails still queued to it (their link is dead). Call inside the
   * transaction that queues the new email.
   */
  replaceEmailSignIn(record: Omit<EmailSignInRecord, 'codeAttempts'>): Promise<void>;
  findEmailSignInById(id: string): Promise<EmailSignInRecord | null>;
  findEmailSignInByEmail(email: string): Promise<EmailSignInRecord | null>;
  /**
   * Counts one wrong code, only while fewer than `maxAttempts` were counted; true when counted.
   * Conditional, so concurrent wrong guesses cannot push past the limit unnoticed.
   */
  countWrongCode(id: string, maxAttempts: number): Promise<boolean>;
  /**
   * Spends the sign-in: deletes the row, for a code only while its attempts are under
   * `maxAttempts`. True only for the one caller that deleted it: link and code together are used
   * exactly once. Also drops the body of the sign-in emails still queued to the address.
   */
  spendEmailSignIn(id: string, options: { maxCodeAttempts: number | null }): Promise<boolean>;
  /** Deletes the sign-ins expired at `now`; returns how many. */
  deleteExpiredEmailSignIns(now: Date): Promise<number>;
}
