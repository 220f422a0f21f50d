/**
 * @module Storage verbs for linked provider accounts (table `accounts`). Token fields hold
 * AES-256-GCM envelopes (crypto/envelope.ts), never plain provider tokens.
 */

export interface LinkedAccount {
  id: string;
  userId: string;
  provider: string;
  providerAccountId: string;
  providerLogin: string;
  accessTokenEnc: string;
  refreshTokenEnc: string | null;
  accessTokenExpiresAt: Date | null;
  /** Granted scopes, space-separated (RFC 6749 §3.3). */
  scope: string;
  createdAt: Date;
  updatedAt: Date;
}

export type AccountTokenUpdate = Pick<LinkedAccount, 'providerLogin' | 'accessTokenEnc' | 'refreshTokenEnc' | 'accessTokenExpiresAt' | 'scope' | 'updatedAt'>;

export interface AccountStore {
  findAccount(provider: string, providerAccountId: string): Promise<LinkedAccount | null>;
  /**
   * 'already_linked' when another row holds (provider, providerAccountId): a concurrent
   * callback won the race. Never throws for that case, so a transaction stays usable.
   */
  createAccount(account: LinkedAccount): Promise<'created' | 'already_linked'>;
  updateAccountTokens(accountId: string, update: AccountTokenUpdate): Promise<void>;
  listUserAccounts(userId: string): Promise<LinkedAccount[]>;
}
