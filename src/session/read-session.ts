/** @module Reads and validates the session cookie of a request, for routes that need a user. */
import type { Context } from 'hono';
import { unauthorized } from '../errors.js';
import type { AppEnv } from '../http/env.js';
import { readSessionCookie, type SessionCookieSettings } from './cookie.js';
import { validateSessionToken, type SessionDeps, type ValidSession } from './flow.js';

export async function readValidSession(c: Context<AppEnv>, deps: { session: SessionDeps; cookie: SessionCookieSettings }): Promise<ValidSession | null> {
  const token = readSessionCookie(c, deps.cookie);
  return token ? validateSessionToken(deps.session, token, c.get('requestContext').now) : null;
}

/** The 401's message: the fast path (fast-path.ts) says the same. */
export const NOT_SIGNED_IN = 'You are not signed in.';

export async function requireSession(c: Context<AppEnv>, deps: { session: SessionDeps; cookie: SessionCookieSettings }): Promise<ValidSession> {
  const valid = await readValidSession(c, deps);
  if (valid === null) throw unauthorized('not_authenticated', NOT_SIGNED_IN);
  return valid;
}
