/** @module The library face's `getSession(request)`: the session cookie of any Web-standard request. */
import { parse as parseCookies } from 'hono/utils/cookie';
import { toPublicUser, type PublicUser } from '../users/user.js';
import type { SessionCookieSettings } from './cookie.js';
import { validateSessionToken, type SessionDeps } from './flow.js';

export interface GatehouseSession {
  user: PublicUser;
  /** `methods`: how the sign-in was proven (`password`, `totp`, `recovery_code`, `github`, `passkey`, …), so an app can demand a second factor. */
  session: { id: string; expires: string; methods: readonly string[] };
}

/** Reads and validates the session cookie of `request` at `now`; null when there is no valid session. */
export async function sessionOfRequest(session: SessionDeps, cookie: SessionCookieSettings, request: Request, now: Date): Promise<GatehouseSession | null> {
  const header = request.headers.get('cookie');
  const value = header ? parseCookies(header, cookie.name)[cookie.name] : undefined;
  if (value === undefined) return null;
  const valid = await validateSessionToken(session, value, now);
  if (valid === null) return null;
  return {
    user: toPublicUser(valid.user),
    session: { id: valid.session.id, expires: valid.session.expiresAt.toISOString(), methods: valid.session.methods },
  };
}
