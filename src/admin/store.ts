/** @module The storage verbs of the operators' tools (DESIGN §9.6): search users, read the audit trail, disable. */
import type { AuditEvent } from '../audit/audit-log.js';
import type { User } from '../users/user.js';

/** Where a page of users starts after: the last row of the previous page, in the list's order. */
export interface UserCursor {
  createdAt: number;
  id: string;
}

export interface UserSearch {
  /** Lower-cased; matches an email substring, or an id exactly. */
  query: string | null;
  limit: number;
  after: UserCursor | null;
}

/** Where a page of the audit list ends: its last event's time (epoch milliseconds) and id. */
export interface AuditCursor {
  at: number;
  id: number;
}

export interface AuditSearch {
  userId: string | null;
  type: string | null;
  /** Inclusive bounds, epoch milliseconds. */
  since: number | null;
  until: number | null;
  limit: number;
  /** Newest first (by time, then id): the page starts below this event. */
  before: AuditCursor | null;
}

export interface StoredAuditEvent extends AuditEvent {
  id: number;
}

export interface UserOverview {
  /** Unexpired sessions. */
  sessions: number;
  providers: { provider: string; login: string; linkedAt: Date }[];
  twoFactorEnabled: boolean;
  recoveryCodesLeft: number;
  /** Registered passkeys (DESIGN §9.4). */
  passkeys: number;
}

export interface AdminStore {
  /** Oldest first by creation, then id: a stable order whatever is added meanwhile. Up to `limit + 1` rows, so the caller knows whether more follow. */
  searchUsers(search: UserSearch): Promise<User[]>;
  /** What an operator sees of a user besides its row, in one round of queries. */
  userOverview(userId: string, now: Date): Promise<UserOverview>;
  /** Newest first; up to `limit + 1` rows. */
  searchAuditEvents(search: AuditSearch): Promise<StoredAuditEvent[]>;
}
