/**
 * @module Register and log in with email and password, in the spec's order of work (SPEC §4).
 * Rate limits run before these flows (in the routes); the login lock runs inside login.
 */
import { randomUUID } from 'node:crypto';
import { recordAudit } from '../audit/record.js';
import { issueVerificationEmail, type IssuedLink, type VerificationDeps } from '../email-verification/flow.js';
import { conflict, unauthorized } from '../errors.js';
import type { RequestContext } from '../request-context.js';
import { issueSession, type IssuedSession, type SessionDeps } from '../session/flow.js';
import type { Stores } from '../stores.js';
import type { User } from '../users/user.js';
import type { PasswordHasher } from './hasher.js';

export interface PasswordFlowDeps {
  stores: Stores;
  hasher: PasswordHasher;
  session: SessionDeps;
  verification: Omit<VerificationDeps, 'stores'>;
}

export interface SignedIn {
  user: User;
  session: IssuedSession;
}

export interface Registered extends SignedIn {
  verification: IssuedLink;
}

export interface Credentials {
  /** Already trimmed and lower-cased by the schema. */
  email: string;
  password: string;
}

export async function registerWithPassword(
  deps: PasswordFlowDeps,
  credentials: Credentials,
  ctx: RequestContext,
): Promise<Registered> {
  const { users } = deps.stores;
  // Checked before hashing so a taken email costs no bcrypt work; the unique index below
  // still decides a race between two registrations of one email.
  if ((await users.findUserByEmail(credentials.email)) !== null) {
    throw conflict('email_exists', 'An account with this email already exists.');
  }
  const passwordHash = await deps.hasher.hash(credentials.password);
  const user: User = {
    id: randomUUID(),
    email: credentials.email,
    emailVerified: false,
    passwordHash,
    createdAt: ctx.now,
    lastLoginAt: null,
  };
  // The user, its verification token and the queued email exist together or not at all.
  const verification = await deps.stores.transaction(async (tx) => {
    if ((await tx.users.createUser(user)) === 'email_taken') return null;
    return issueVerificationEmail(tx, deps.verification, { id: user.id, email: credentials.email }, ctx.now);
  });
  if (verification === null) throw conflict('email_exists', 'An account with this email already exists.');
  deps.verification.onEmailQueued();
  const session = await issueSession(deps.session, user.id, ctx.now);
  await recordAudit(deps.stores.audit, ctx, 'user_created', user.id, { email: user.email, method: 'password' });
  return { user, session, verification };
}

export async function loginWithPassword(
  deps: PasswordFlowDeps,
  credentials: Credentials,
  ctx: RequestContext,
): Promise<SignedIn> {
  const { users, audit } = deps.stores;
  const user = await users.findUserByEmail(credentials.email);
  // Always one bcrypt compare, against a dummy hash when there is no user, so an unknown email
  // answers in the time of a wrong password and cannot be told apart (account enumeration).
  const passwordMatches = await deps.hasher.verify(credentials.password, user?.passwordHash ?? null);
  if (user === null || !passwordMatches) {
    await recordAudit(audit, ctx, 'login_failure', user?.id ?? null, {
      email: credentials.email,
      reason: user === null ? 'unknown_email' : 'wrong_password',
      method: 'password',
    });
    throw unauthorized('invalid_credentials', 'The email or password is incorrect.');
  }
  await users.recordLogin(user.id, ctx.now);
  const session = await issueSession(deps.session, user.id, ctx.now);
  await recordAudit(audit, ctx, 'login_success', user.id, { email: user.email, method: 'password' });
  return { user: { ...user, lastLoginAt: ctx.now }, session };
}
