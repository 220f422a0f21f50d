/** @module Storage verbs for two-factor sign-in (DESIGN §9.3). Secrets are stored sealed, recovery codes as SHA-256 digests. */

export interface TotpRecord {
  userId: string;
  /** The base32 secret sealed in the AES-256-GCM envelope. */
  secretEnc: string;
  /** null while set up but not yet confirmed with a code: nothing is enforced then. */
  enabledAt: Date | null;
  lastUsedStep: number | null;
  createdAt: Date;
}

export interface TotpStore {
  findTotp(userId: string): Promise<TotpRecord | null>;
  /** Stores a new, not yet enabled secret in place of a pending one; never replaces an enabled one ('enabled'). */
  savePendingTotp(userId: string, secretEnc: string, now: Date): Promise<'saved' | 'enabled'>;
  /**
   * Enables the pending secret and records `step` as used — only while the pending secret is still
   * `secretEnc`, the one the code was checked against (a setup in another tab may have replaced it);
   * false otherwise.
   */
  enableTotp(userId: string, secretEnc: string, step: number, now: Date): Promise<boolean>;
  /**
   * Records `step` as used, only when it is later than the last used one: true for the one
   * caller that may accept a code of that step (a code works once, also across instances).
   */
  useTotpStep(userId: string, step: number): Promise<boolean>;
  deleteTotp(userId: string): Promise<void>;
}

export interface RecoveryCodeStore {
  /** Replaces every code of the user with these digests: the old set stops working. */
  replaceRecoveryCodes(userId: string, codeHashes: readonly string[], now: Date): Promise<void>;
  /** Marks the unused code with this digest used; true for the one caller that did. */
  useRecoveryCode(userId: string, codeHash: string, now: Date): Promise<boolean>;
  countUnusedRecoveryCodes(userId: string): Promise<number>;
  deleteRecoveryCodes(userId: string): Promise<void>;
}
