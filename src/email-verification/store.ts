/** @module Storage verbs for email verification tokens (stored as a SHA-256 of the secret). */

export interface VerificationTokenRecord {
  id: string;
  userId: string;
  secretHash: string;
  expiresAt: Date;
  createdAt: Date;
}

export interface VerificationTokenStore {
  /**
   * Deletes the user's earlier tokens, then stores this one: only the newest link works.
   * Call inside a transaction, so concurrent replacements for one user serialise.
   */
  replaceVerificationToken(token: VerificationTokenRecord): Promise<void>;
  findVerificationToken(id: string): Promise<VerificationTokenRecord | null>;
  /** True only for the one caller that deleted the row: the token is spent exactly once. */
  deleteVerificationToken(id: string): Promise<boolean>;
  /** Deletes every token of the user (its email address changed: a link to the old one dies). */
  deleteUserVerificationTokens(userId: string): Promise<void>;
  /** Deletes the tokens expired at `now` (a used token is already deleted); returns how many. */
  deleteExpiredVerificationTokens(now: Date): Promise<number>;
}
