/** @module Storage verbs for password reset tokens (stored only as a bcrypt hash, SPEC §2). */

export interface ResetTokenRecord {
  id: string;
  userId: string;
  secretHash: string;
  expiresAt: Date;
  createdAt: Date;
  usedAt: Date | null;
}

export interface ResetTokenStore {
  /** Deletes the user's earlier tokens, then stores this one: only the newest link works. */
  replaceResetToken(token: Omit<ResetTokenRecord, 'usedAt'>): Promise<void>;
  findResetToken(id: string): Promise<ResetTokenRecord | null>;
  /** True only for the one caller that marked the unused token used (races: exactly one wins). */
  markResetTokenUsed(id: string, at: Date): Promise<boolean>;
  /** Deletes every token of the user (its email address changed: links sent to the old one die). */
  deleteUserResetTokens(userId: string): Promise<void>;
  /** Deletes the tokens that are used, or expired at `now`; returns how many. */
  deleteSpentResetTokens(now: Date): Promise<number>;
}
