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

/**
 * A link a provider sign-in will make once its second factor is proved (table
 * `oauth_pending_links`): the `accounts` row to create, held under the two-factor challenge id
 * until that challenge expires.
 */
export interface PendingLink {
  challengeId: string;
  account: LinkedAccount;
  expiresAt: Date;
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
  /** Unlinks the user's account at `provider`; false when there was none. */
  deleteUserAccount(userId: string, provider: string): Promise<boolean>;
  /** Unlinks every provider account of the user (account pre-hijacking defence); returns how many. */
  deleteUserAccounts(userId: string): Promise<number>;
  /** Keeps a link until its challenge's code step (`takePendingLink`) or its expiry. */
  holdPendingLink(link: PendingLink): Promise<void>;
  /**
   * Deletes the link held under `challengeId` and returns its account row, when it has not expired
   * at `now`; null otherwise. Of two callers with the same id, one gets it.
   */
  takePendingLink(challengeId: string, now: Date): Promise<LinkedAccount | null>;
  /** Deletes the links whose challenge has expired at `now`; returns how many. */
  deleteExpiredPendingLinks(now: Date): Promise<number>;
}

/**
 * Pending sign-ins already used (table `oauth_consumed_sign_ins`): a pending sign-in is
 * accepted once, on every instance sharing the database, even when its cookie was copied
 * before the callback cleared it. Keyed by a SHA-256 of the state; a row lives until the
 * pending sign-in itself would have expired, then the sweep deletes it.
 */
export interface ConsumedSignInStore {
  /** True only for the first caller with this state hash; false when it was consumed already. */
  consumeSignIn(stateHash: string, expiresAt: Date): Promise<boolean>;
  /** Deletes the rows whose pending sign-in has expired at `now`; returns how many. */
  deleteExpiredSignIns(now: Date): Promise<number>;
}
