/** @module Storage verbs for sessions. Rows hold a SHA-256 of the token, never the token. */
import type { User } from '../users/user.js';

export interface SessionRecord {
  id: string;
  userId: string;
  tokenHash: string;
  expiresAt: Date;
  createdAt: Date;
}

export interface SessionStore {
  createSession(session: SessionRecord): Promise<void>;
  /** One primary-key read joined to its user: the hot path of every session check. */
  findSessionWithUser(sessionId: string): Promise<{ session: SessionRecord; user: User } | null>;
  deleteSession(sessionId: string): Promise<void>;
  deleteUserSessions(userId: string): Promise<number>;
  deleteExpiredSessions(now: Date): Promise<number>;
}
