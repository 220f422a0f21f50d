/** @module Storage verbs for passkeys (DESIGN §9.4). A passkey row holds only public data: the credential id, its public key and counter. */

export interface PasskeyRecord {
  /** Ours (a UUID): what the API and the pages name a passkey by. */
  id: string;
  userId: string;
  /** The authenticator's credential id, base64url. */
  credentialId: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  /** The signature counter last seen (0 for authenticators that do not count). */
  counter: number;
  transports: string[];
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export interface PasskeyStore {
  /** 'exists' when the credential id is registered already (to this or another account). */
  addPasskey(record: PasskeyRecord): Promise<'added' | 'exists'>;
  findPasskeyByCredentialId(credentialId: string): Promise<PasskeyRecord | null>;
  /** Oldest first. */
  listUserPasskeys(userId: string): Promise<PasskeyRecord[]>;
  countUserPasskeys(userId: string): Promise<number>;
  /** False when the user has no passkey with this id. */
  renamePasskey(userId: string, id: string, name: string): Promise<boolean>;
  /** False when the user has no passkey with this id. */
  deletePasskey(userId: string, id: string): Promise<boolean>;
  /**
   * Records a sign-in: the new counter and the time, only while the counter is still
   * `previousCounter` (two sign-ins with one counter value: one wins); true for the one that did.
   */
  usePasskey(id: string, previousCounter: number, newCounter: number, now: Date): Promise<boolean>;
  deleteUserPasskeys(userId: string): Promise<number>;
}
