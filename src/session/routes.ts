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
import { z } from 'zod';
import { okAnswer, type RouteDoc } from '../http/route-docs.js';

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

/** A signed-in person, as GET /session answers it (users/user.ts toPublicUser). */
export const publicUserAnswer = z.object({
  id: z.string(),
  email: z.string().nullable(),
  emailVerified: z.boolean(),
  createdAt: z.string().describe('ISO 8601'),
  lastLoginAt: z.string().nullable(),
});

export const sessionRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/session',
    tag: 'Session',
    summary: 'The signed-in user and session',
    auth: 'session',
    answers: [
      {
        status: 200,
        description: 'The session is valid.',
        json: z.object({
          user: publicUserAnswer,
          session: z.object({
            id: z.string(),
            expires: z.string(),
            methods: z.array(z.string()).describe('how the sign-in was proven: password, totp, github, …'),
          }),
        }),
      },
    ],
  },
  {
    method: 'post',
    path: '/logout',
    tag: 'Session',
    summary: 'Sign out: delete the session and clear the cookie (200 without a session too)',
    body: 'none',
    answers: [{ status: 200, description: 'Signed out.', json: okAnswer, headers: { 'Set-Cookie': 'the session cookie, expired' } }],
  },
];
