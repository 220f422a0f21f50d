/** @module GET /session and POST /logout. */
import { Hono } from 'hono';
import { unauthorized } from '../errors.js';
import type { AppEnv } from '../http/env.js';
import { assertNoForeignBody } from '../http/json-body.js';
import { toPublicUser } from '../users/user.js';
import { clearSessionCookie, readSessionCookie, type SessionCookieSettings } from './cookie.js';
import { revokeSession, validateSessionToken, type SessionDeps } from './flow.js';

export interface SessionRouteDeps {
  session: SessionDeps;
  cookie: SessionCookieSettings;
}

export function createSessionRoutes(deps: SessionRouteDeps): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .get('/session', async (c) => {
      const token = readSessionCookie(c, deps.cookie);
      const valid = token ? await validateSessionToken(deps.session, token, c.get('requestContext').now) : null;
      if (valid === null) throw unauthorized('not_authenticated', 'You are not signed in.');
      return c.json({
        user: toPublicUser(valid.user),
        session: { id: valid.session.id, expires: valid.session.expiresAt.toISOString() },
      });
    })
    .post('/logout', async (c) => {
      assertNoForeignBody(c);
      const token = readSessionCookie(c, deps.cookie);
      const valid = token ? await validateSessionToken(deps.session, token, c.get('requestContext').now) : null;
      if (valid !== null) await revokeSession(deps.session, valid.session.id);
      clearSessionCookie(c, deps.cookie);
      return c.json({ ok: true });
    });
}
