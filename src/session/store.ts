/** @module Storage verbs for sessions. Rows hold a SHA-256 of the token, never the token. */
import type { User } from '../users/user.js';

export interface SessionRecord {
  id: string;
  userId: string;
  tokenHash: string;
  expiresAt: Date;
  /** When the person signed in: re-authentication by recency reads it (credentials/reauthenticate.ts). */
  createdAt: Date;
  /** The client at sign-in, for the session list; null when unknown. */
  ip: string | null;
  userAgent: string | null;
  /** Refreshed at most once a minute (`touchSession`); the sign-in time until then. */
  lastSeenAt: Date;
  /** How the sign-in was proven (`password`, `totp`, `recovery_code`, `github`, …); empty for sessions older than migration 008. */
  methods: readonly string[];
}

export type NewSession = Omit<SessionRecord, 'lastSeenAt'>;

/** What a session check reads: the row without the client it was signed in from (only the session list shows that). */
export type CheckedSession = Omit<SessionRecord, 'ip' | 'userAgent'>;

export interface SessionStore {
  /**
   * Inserts the row only while its user exists and is not disabled (one statement, so a disable
   * cannot slip between a check and the insert); false when it did not.
   */
  createSession(session: NewSession): Promise<boolean>;
  /** One primary-key read joined to its user: the hot path of every session check. */
  findSessionWithUser(sessionId: string): Promise<{ session: CheckedSession; user: User } | null>;
  deleteSession(sessionId: string): Promise<void>;
  /** The user's unexpired sessions, newest first. */
  listUserSessions(userId: string, now: Date): Promise<SessionRecord[]>;
  /** Sets `lastSeenAt` to `now` unless it was set less than `minIntervalMs` ago (another instance may have). */
  touchSession(sessionId: string, now: Date, minIntervalMs: number): Promise<void>;
  /** Deletes the session only if it belongs to the user; false otherwise. */
  deleteUserSession(userId: string, sessionId: string): Promise<boolean>;
  /**
   * Deletes every session of the user, but `keepSessionId` when given; returns the ids deleted,
   * for the `session.revoked` event that reports them (webhooks/events.ts).
   */
  deleteUserSessionsReturningIds(userId: string, keepSessionId: string | null): Promise<string[]>;
  deleteExpiredSessions(now: Date): Promise<number>;
}
