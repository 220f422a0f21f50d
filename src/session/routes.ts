/** @module GET /session and POST /logout. */
import { Hono } from 'hono';
import type { AuditStore } from '../audit/audit-log.js';
import { recordAudit } from '../audit/record.js';
import type { AppEnv } from '../http/env.js';
import { jsonAnswer } from '../http/answer.js';
import { acceptNoBody } from '../http/json-body.js';
import { toPublicUser } from '../users/user.js';
import { clearSessionCookie, type SessionCookieSettings } from './cookie.js';
import { revokeSession, type SessionDeps } from './flow.js';
import { readValidSession, requireSession } from './read-session.js';

export interface SessionRouteDeps {
  session: SessionDeps;
  cookie: SessionCookieSettings;
  audit: AuditStore;
}

export function createSessionRoutes(deps: SessionRouteDeps): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .get('/session', async (c) => {
      const valid = await requireSession(c, deps);
      return jsonAnswer(c, {
        user: toPublicUser(valid.user),
        session: { id: valid.session.id, expires: valid.session.expiresAt.toISOString(), methods: valid.session.methods },
      });
    })
    .post('/logout', async (c) => {
      await acceptNoBody(c);
      const valid = await readValidSession(c, deps);
      if (valid !== null) {
        await revokeSession(deps.session, valid.session.id);
        await recordAudit(deps.audit, c.get('requestContext'), 'logout', valid.user.id, { sessionId: valid.session.id });
      }
      clearSessionCookie(c, deps.cookie);
      return jsonAnswer(c, { ok: true });
    });
}
