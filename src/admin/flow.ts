/**
 * @module The operators' actions (DESIGN §9.6), the same functions behind the admin API
 * (routes.ts) and the `gatehouse users` / `gatehouse audit` commands (src/cli.ts): find and page
 * users, show one, disable and enable, revoke sessions, lift the login lock, delete, read the
 * audit trail. Every action is audited against the user acted on, with `metadata.actor` saying
 * through what: `admin` (the API) or `cli`.
 */
import { eraseAccount } from '../account/flow.js';
import type { AuditEventType, AuditMetadata } from '../audit/audit-log.js';
import { notFound } from '../errors.js';
import type { IpLock, LockSubject, LoginLock } from '../limits/login-lock.js';
import { reportSessionsRevoked } from '../session/flow.js';
import type { Stores } from '../stores.js';
import { emitEvent } from '../webhooks/events.js';
import type { User } from '../users/user.js';
import { USER_ID, encodeCursor, type AuditListInput, type UserListInput } from './input.js';
import type { AdminStore, StoredAuditEvent } from './store.js';

export interface AdminDeps {
  stores: Stores;
  admin: AdminStore;
  loginLock: LoginLock;
}

/** Who acts, for the audit row: the API's client (its IP and user agent) or the command line. */
export interface Operator {
  actor: 'admin' | 'cli';
  ip: string | null;
  userAgent: string | null;
  now: Date;
}

/** A user as operators see it in a list. Never the password hash. */
export interface AdminUser {
  id: string;
  email: string | null;
  emailVerified: boolean;
  hasPassword: boolean;
  createdAt: string;
  lastLoginAt: string | null;
  disabledAt: string | null;
}

export interface AdminUserDetails extends AdminUser {
  /** Unexpired sessions. */
  sessions: number;
  providers: { provider: string; login: string; linkedAt: string }[];
  twoFactor: { enabled: boolean; recoveryCodesLeft: number };
  /** Registered passkeys (DESIGN §9.4). */
  passkeys: number;
  /** The login lock of the account (its email, or its id for an account without one): seconds left, null when not locked. */
  lockedForSeconds: number | null;
}

export interface AdminAuditEvent {
  id: number;
  type: string;
  userId: string | null;
  ip: string | null;
  userAgent: string | null;
  metadata: AuditMetadata;
  at: string;
}

export function toAdminUser(user: User): AdminUser {
  return {
    id: user.id,
    email: user.email,
    emailVerified: user.emailVerified,
    hasPassword: user.passwordHash !== null,
    createdAt: user.createdAt.toISOString(),
    lastLoginAt: user.lastLoginAt?.toISOString() ?? null,
    disabledAt: user.disabledAt?.toISOString() ?? null,
  };
}

function toAdminAuditEvent(event: StoredAuditEvent): AdminAuditEvent {
  return {
    id: event.id,
    type: event.type,
    userId: event.userId,
    ip: event.ip,
    userAgent: event.userAgent,
    metadata: event.metadata,
    at: event.at.toISOString(),
  };
}

const NO_SUCH_USER = 'No such user.';

/** The user of `id`; 404 for an id of another form (checked before any query) or an unknown one. */
export async function findUserById(deps: Pick<AdminDeps, 'stores'>, id: string): Promise<User> {
  if (!USER_ID.test(id)) throw notFound(NO_SUCH_USER);
  const user = await deps.stores.users.findUserById(id);
  if (user === null) throw notFound(NO_SUCH_USER);
  return user;
}

/** A user named by email (anything with an `@`) or by id, as the CLI takes them. */
export async function findUserByEmailOrId(deps: Pick<AdminDeps, 'stores'>, reference: string): Promise<User> {
  const text = reference.trim();
  if (!text.includes('@')) return findUserById(deps, text.toLowerCase());
  if (text.length > 320) throw notFound(NO_SUCH_USER);
  const user = await deps.stores.users.findUserByEmail(text.toLowerCase());
  if (user === null) throw notFound(NO_SUCH_USER);
  return user;
}

async function audit(
  deps: Pick<AdminDeps, 'stores'>,
  operator: Operator,
  type: AuditEventType,
  userId: string | null,
  metadata: AuditMetadata = {},
): Promise<void> {
  await deps.stores.audit.recordEvent({
    type,
    userId,
    ip: operator.ip,
    userAgent: operator.userAgent,
    metadata: { actor: operator.actor, ...metadata },
    at: operator.now,
  });
}

export async function listUsers(deps: Pick<AdminDeps, 'admin'>, input: UserListInput): Promise<{ users: AdminUser[]; nextCursor: string | null }> {
  const rows = await deps.admin.searchUsers(input);
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  const nextCursor = rows.length > input.limit && last !== undefined ? encodeCursor([last.createdAt.getTime(), last.id]) : null;
  return { users: page.map(toAdminUser), nextCursor };
}

/** The lock subject of the account itself: its email, or its id when it has none (mfa/flow.ts counts it so). */
function accountSubjects(user: User): LockSubject[] {
  return user.email !== null ? [{ email: user.email }, { userId: user.id }] : [{ userId: user.id }];
}

export async function showUser(deps: AdminDeps, user: User, now: Date): Promise<AdminUserDetails> {
  const [overview, lockedForSeconds] = await Promise.all([deps.admin.userOverview(user.id, now), deps.loginLock.lockedForSeconds(accountSubjects(user), now)]);
  return {
    ...toAdminUser(user),
    sessions: overview.sessions,
    providers: overview.providers.map((entry) => ({ provider: entry.provider, login: entry.login, linkedAt: entry.linkedAt.toISOString() })),
    twoFactor: { enabled: overview.twoFactorEnabled, recoveryCodesLeft: overview.recoveryCodesLeft },
    passkeys: overview.passkeys,
    lockedForSeconds,
  };
}

/**
 * Sets `disabled_at` (an already disabled user keeps the first time), then revokes every session.
 * In that order: a sign-in racing it either made its session before (revoked here) or finds the
 * column set (session/flow.ts issueSession refuses it in the insert itself).
 */
export async function disableUser(deps: AdminDeps, user: User, operator: Operator): Promise<{ user: AdminUser; sessionsRevoked: number }> {
  const disabledAt = user.disabledAt ?? operator.now;
  // With its events in one transaction: `user.disabled` only when it was enabled, `session.revoked` when any ended.
  const revokedIds = await deps.stores.transaction(async (tx) => {
    if (!(await tx.users.setDisabledAt(user.id, disabledAt))) return null;
    const ids = await tx.sessions.deleteUserSessionsReturningIds(user.id, null);
    // The apps it signed in to through Gatehouse lose their tokens with it.
    await tx.appAccess.revokeAccount(user.id, operator.now);
    if (user.disabledAt === null) await emitEvent(tx, operator.now, 'user.disabled', user, { actor: operator.actor });
    await reportSessionsRevoked(tx, operator.now, user, ids, 'disabled');
    return ids;
  });
  if (revokedIds === null) throw notFound(NO_SUCH_USER);
  const sessionsRevoked = revokedIds.length;
  await audit(deps, operator, 'admin_user_disabled', user.id, { sessionsRevoked, alreadyDisabled: user.disabledAt !== null });
  return { user: toAdminUser({ ...user, disabledAt }), sessionsRevoked };
}

export async function enableUser(deps: AdminDeps, user: User, operator: Operator): Promise<{ user: AdminUser }> {
  const found = await deps.stores.transaction(async (tx) => {
    if (!(await tx.users.setDisabledAt(user.id, null))) return false;
    if (user.disabledAt !== null) await emitEvent(tx, operator.now, 'user.enabled', user, { actor: operator.actor });
    return true;
  });
  if (!found) throw notFound(NO_SUCH_USER);
  await audit(deps, operator, 'admin_user_enabled', user.id, { wasDisabled: user.disabledAt !== null });
  return { user: toAdminUser({ ...user, disabledAt: null }) };
}

export async function revokeUserSessions(deps: AdminDeps, user: User, operator: Operator): Promise<{ sessionsRevoked: number }> {
  const sessionsRevoked = await deps.stores.transaction(async (tx) => {
    const ids = await tx.sessions.deleteUserSessionsReturningIds(user.id, null);
    await reportSessionsRevoked(tx, operator.now, user, ids, 'admin');
    return ids.length;
  });
  await audit(deps, operator, 'admin_sessions_revoked', user.id, { sessionsRevoked });
  return { sessionsRevoked };
}

/** Lifts the login lock of the user's email (and of its id, which counts an account without one) and forgets their failures. */
export async function unlockUser(deps: AdminDeps, user: User, operator: Operator): Promise<{ wasLocked: boolean }> {
  const subjects = accountSubjects(user);
  const wasLocked = (await deps.loginLock.lockedForSeconds(subjects, operator.now)) !== null;
  await deps.loginLock.clear(subjects, operator.now);
  await audit(deps, operator, 'admin_user_unlocked', user.id, { wasLocked });
  return { wasLocked };
}

/** The most address locks one list shows (a flood of locked addresses cannot make one answer huge). */
export const MAX_LISTED_IP_LOCKS = 1000;

/** The client addresses under a login lock now, longest first (the account locks are per user: showUser). */
export async function listIpLocks(deps: Pick<AdminDeps, 'loginLock'>, now: Date): Promise<{ locks: IpLock[] }> {
  return { locks: await deps.loginLock.listIpLocks(now, MAX_LISTED_IP_LOCKS) };
}

/**
 * Lifts the login lock of a client address (already in the form parseIpAddress gives) and forgets
 * its failures: for a proxy whose own address was locked, or an office behind one address.
 */
export async function unlockIp(deps: Pick<AdminDeps, 'loginLock' | 'stores'>, ip: string, operator: Operator): Promise<{ wasLocked: boolean }> {
  const subjects: LockSubject[] = [{ ip }];
  const wasLocked = (await deps.loginLock.lockedForSeconds(subjects, operator.now)) !== null;
  await deps.loginLock.clear(subjects, operator.now);
  await audit(deps, operator, 'admin_ip_unlocked', null, { ip, wasLocked });
  return { wasLocked };
}

/** The owner's own deletion (account/flow.ts eraseAccount): the same rows go; the audit rows stay, without the address. */
export async function deleteUser(deps: AdminDeps, user: User, operator: Operator): Promise<{ deleted: true }> {
  if (!(await eraseAccount(deps.stores, user, { now: operator.now, reason: 'admin' }))) throw notFound(NO_SUCH_USER);
  await audit(deps, operator, 'admin_user_deleted', user.id);
  return { deleted: true };
}

export async function listAuditEvents(
  deps: Pick<AdminDeps, 'admin'>,
  input: AuditListInput,
): Promise<{ events: AdminAuditEvent[]; nextCursor: string | null }> {
  const rows = await deps.admin.searchAuditEvents(input);
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    events: page.map(toAdminAuditEvent),
    nextCursor: rows.length > input.limit && last !== undefined ? encodeCursor([last.at.getTime(), last.id]) : null,
  };
}
