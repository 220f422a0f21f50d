/**
 * @module Sessions: issue, validate, revoke. A session is valid only while its JWT verifies AND
 * its row exists, is unexpired and holds the SHA-256 of that very token — so logout, password
 * reset and account takeover defences revoke it immediately.
 */
import { randomUUID } from 'node:crypto';
import type { AuditMetadata, AuditStore } from '../audit/audit-log.js';
import { recordAudit } from '../audit/record.js';
import { hexDigestsEqual, sha256Hex } from '../crypto/digest.js';
import { accountDisabled } from '../errors.js';
import type { User } from '../users/user.js';
import type { RequestContext } from '../request-context.js';
import type { AppAccessStore } from '../oidc-provider/store.js';
import type { Stores } from '../stores.js';
import { emitEvent, type EventSubject, type SessionRevokedReason, type WebhookEventStore } from '../webhooks/events.js';
import type { SessionStore } from './store.js';
import type { SessionTokenCodec } from './token.js';

export interface SessionDeps {
  sessions: SessionStore;
  /**
   * Opens the transaction that inserts a session with its `session.created` event (and deletes one
   * with its `session.revoked`), so the event exists exactly when the row does. Absent (deps built
   * by hand in a test), sessions are made and ended without an event.
   */
  transaction?: Stores['transaction'];
  tokens: SessionTokenCodec;
  sessionExpiresInSeconds: number;
  /**
   * Called by a valid session check whose session was last seen a minute ago or more; it refreshes
   * `lastSeenAt` off the response path (gatehouse.ts), so the check itself waits for no write.
   */
  onSeen?: (sessionId: string, now: Date) => void;
  /**
   * SESSION_IDLE_TIMEOUT in milliseconds; null or absent: off. Compared with the `lastSeenAt` the
   * check already loads (no query of its own), which lags the last use by up to
   * LAST_SEEN_INTERVAL_MS: a session is refused once unseen for longer than this plus that
   * interval, so one used within the timeout is never refused, and the effective timeout is up to
   * a minute longer than the setting.
   */
  idleTimeoutMs?: number | null;
}

/** `lastSeenAt` is refreshed at most this often per session (DESIGN §9.2). */
export const LAST_SEEN_INTERVAL_MS = 60_000;

/** Who signs in: the request's time and client, kept in the session row for the session list. */
export interface SessionClient {
  now: Date;
  ip: string | null;
  userAgent: string | null;
}

export interface IssuedSession {
  id: string;
  token: string;
  expiresAt: Date;
}

export interface ValidSession {
  user: User;
  session: { id: string; expiresAt: Date; createdAt: Date; methods: readonly string[] };
}

/**
 * `methods`: how the sign-in was proven (`password`, `totp`, `github`, …), kept in the row for `session.methods`.
 * Every sign-in passes here: a disabled account (src/admin/) gets 403 `account_disabled`, whichever
 * flow it came through (the flows also check earlier, where their order of work needs it).
 * `user`: the user signing in (its address goes in the event), or a bare id (tests).
 */
export async function issueSession(deps: SessionDeps, user: string | EventSubject, client: SessionClient, methods: readonly string[]): Promise<IssuedSession> {
  const subject: EventSubject = typeof user === 'string' ? { id: user, email: null } : { id: user.id, email: user.email };
  const { now, ip, userAgent } = client;
  const id = randomUUID();
  // JWT times have one-second resolution; the row keeps the same instant as the token.
  const issuedAt = new Date(Math.floor(now.getTime() / 1000) * 1000);
  const expiresAt = new Date(issuedAt.getTime() + deps.sessionExpiresInSeconds * 1000);
  const token = deps.tokens.sign({ userId: subject.id, sessionId: id, issuedAt, expiresAt });
  const row = { id, userId: subject.id, tokenHash: sha256Hex(token), expiresAt, createdAt: now, ip, userAgent, methods };
  // The insert and its event (one read of the endpoints; writes only when one wants it), together.
  const created =
    deps.transaction === undefined
      ? await deps.sessions.createSession(row)
      : await deps.transaction(async (tx) => {
          if (!(await tx.sessions.createSession(row))) return false;
          await emitEvent(tx, now, 'session.created', subject, { sessionId: id, methods: methods.join('+') });
          return true;
        });
  if (!created) throw accountDisabled();
  return { id, token, expiresAt };
}

/**
 * Reports sessions just deleted in `stores`' transaction (DESIGN §11.2 `session.revoked`); nothing
 * when none was.
 */
export async function reportSessionsRevoked(
  stores: { webhookEvents: WebhookEventStore; appAccess: Pick<AppAccessStore, 'notifyLogout'> },
  now: Date,
  user: EventSubject,
  sessionIds: readonly string[],
  reason: SessionRevokedReason,
): Promise<void> {
  if (sessionIds.length === 0) return;
  await emitEvent(stores, now, 'session.revoked', { id: user.id, email: user.email }, { sessionIds: [...sessionIds], reason });
  // The apps the person signed in to through Gatehouse hear of it (OpenID Connect back-channel
  // logout). The logout token names the person, not a session, so the apps end every session of
  // theirs: not wanted when the person kept this browser's session and ended the others.
  if (reason !== 'revoked_others') await stores.appAccess.notifyLogout(user.id, now);
}

/**
 * The refusal of a proved sign-in to a disabled account, for the flows that check before
 * `issueSession` (before they spend or record anything): its `login_failure` row with
 * `reason: "account_disabled"` and the flow's own details, then 403 `account_disabled`.
 */
export async function refuseDisabledSignIn(audit: AuditStore, ctx: RequestContext, user: User, details: AuditMetadata): Promise<never> {
  await recordAudit(audit, ctx, 'login_failure', user.id, { ...details, reason: 'account_disabled' });
  throw accountDisabled();
}

export async function validateSessionToken(
  deps: Pick<SessionDeps, 'sessions' | 'tokens' | 'onSeen' | 'idleTimeoutMs'>,
  token: string,
  now: Date,
): Promise<ValidSession | null> {
  const claims = deps.tokens.verify(token, now);
  if (claims === null) return null;
  const found = await deps.sessions.findSessionWithUser(claims.sessionId);
  if (found === null) return null;
  const { session, user } = found;
  if (!hexDigestsEqual(sha256Hex(token), session.tokenHash)) return null;
  if (session.userId !== claims.userId || session.expiresAt.getTime() <= now.getTime()) return null;
  // Disabling revokes the sessions; this column comes with the same row, for a sign-in that raced it.
  if (user.disabledAt !== null) return null;
  if (isIdle(deps.idleTimeoutMs, session.lastSeenAt, now)) {
    // Refused like an expired session, and deleted at this first refusal (one never presented
    // again is swept once expired). Only an idle session pays for this write, never a valid check.
    await deps.sessions.deleteSession(session.id);
    return null;
  }
  if (deps.onSeen !== undefined && now.getTime() - session.lastSeenAt.getTime() >= LAST_SEEN_INTERVAL_MS) deps.onSeen(session.id, now);
  return { user, session: { id: session.id, expiresAt: session.expiresAt, createdAt: session.createdAt, methods: session.methods } };
}

function isIdle(idleTimeoutMs: number | null | undefined, lastSeenAt: Date, now: Date): boolean {
  if (idleTimeoutMs === null || idleTimeoutMs === undefined) return false;
  return now.getTime() - lastSeenAt.getTime() > idleTimeoutMs + LAST_SEEN_INTERVAL_MS;
}

/** Ends one session of `user` (logout), with its `session.revoked` event when it still existed. */
export async function revokeSession(deps: Pick<SessionDeps, 'sessions' | 'transaction'>, user: EventSubject, sessionId: string, now: Date): Promise<void> {
  if (deps.transaction === undefined) return deps.sessions.deleteSession(sessionId);
  await deps.transaction(async (tx) => {
    if (await tx.sessions.deleteUserSession(user.id, sessionId)) await reportSessionsRevoked(tx, now, user, [sessionId], 'logout');
  });
}
