/** @module The storage verbs user import and export need, in domain terms (implemented in db/user-transfer-store.ts). */
import type { AppAccessStore } from '../oidc-provider/store.js';
import type { WebhookEventStore } from '../webhooks/events.js';

/** A user as an import finds one already there. */
export interface ExistingUser {
  id: string;
  email: string | null;
  externalId: string | null;
  disabledAt: Date | null;
}

/** A user an import creates; `passwordHash` is stored as it is given (never hashed again). */
export interface NewImportedUser {
  id: string;
  email: string | null;
  emailVerified: boolean;
  passwordHash: string | null;
  createdAt: Date;
  externalId: string | null;
  disabledAt: Date | null;
}

/** What `--on-conflict update` changes on a user already there; an absent field stays as it is. */
export interface ImportedUserUpdate {
  email?: string;
  emailVerified?: boolean;
  passwordHash?: string;
  createdAt?: Date;
  externalId?: string;
  disabledAt?: Date | null;
}

/** A provider sign-in linked to a user (an `accounts` row), without any provider token. */
export interface ProviderLink {
  provider: string;
  providerUserId: string;
  login: string;
}

export interface NewProviderLink extends ProviderLink {
  id: string;
  userId: string;
  createdAt: Date;
}

/** One user as the export writes it. */
export interface ExportedUserRow {
  id: string;
  email: string | null;
  emailVerified: boolean;
  passwordHash: string | null;
  createdAt: Date;
  externalId: string | null;
  disabledAt: Date | null;
  providers: ProviderLink[];
}

/** Everything Gatehouse holds about one person, without a hash, token or secret. */
export interface OwnData {
  sessions: { id: string; createdAt: Date; expiresAt: Date; lastSeenAt: Date | null; ip: string | null; userAgent: string | null; methods: string }[];
  linkedSignIns: { provider: string; login: string; linkedAt: Date }[];
  passkeys: { name: string; createdAt: Date; lastUsedAt: Date | null }[];
  twoFactor: { enabled: boolean; enabledAt: Date | null; recoveryCodesLeft: number };
  auditEvents: { type: string; at: Date; ip: string | null; userAgent: string | null; metadata: Record<string, unknown> }[];
}

export interface TransferStore {
  /** Runs `work` in one transaction (one import batch). */
  transaction<T>(work: (store: TransferStore) => Promise<T>): Promise<T>;
  /** The users with any of these (lower-cased) emails or external ids. */
  findUsers(emails: readonly string[], externalIds: readonly string[]): Promise<ExistingUser[]>;
  /** Which of these provider accounts are linked already, and to whom. */
  findLinkOwners(links: readonly ProviderLink[]): Promise<(ProviderLink & { userId: string })[]>;
  insertUsers(users: readonly NewImportedUser[]): Promise<void>;
  updateUser(userId: string, update: ImportedUserUpdate): Promise<void>;
  insertLinks(links: readonly NewProviderLink[]): Promise<void>;
  /**
   * Ends every session of a user an import disabled, and the apps' grants and tokens (a back-channel
   * logout queued to each app that has one); the session ids deleted.
   */
  deleteSessions(userId: string, now: Date): Promise<string[]>;
  /** Back-channel logouts for ended sessions (OpenID Connect), as the flows' stores queue them. */
  appAccess: Pick<AppAccessStore, 'notifyLogout'>;
  /** The events an import batch reports (webhooks/events.ts), written in the batch's transaction. */
  webhookEvents: WebhookEventStore;
  /** Up to `limit` users with an id after `afterId` (null: from the first), by id, with their provider links. */
  exportPage(afterId: string | null, limit: number): Promise<ExportedUserRow[]>;
  ownData(userId: string, now: Date): Promise<OwnData>;
}
