/**
 * @module GET /session, GET /forward and POST /logout. GET /forward is the session check for a
 * reverse proxy (nginx `auth_request`, Traefik `forwardAuth`, Caddy `forward_auth`): the same
 * cookie check as GET /session, answered in headers only, so the proxy can pass who is signed in
 * to a backend that knows nothing of Gatehouse.
 */
import { Hono } from 'hono';
import type { AuditStore } from '../audit/audit-log.js';
import { recordAudit } from '../audit/record.js';
import type { AppEnv } from '../http/env.js';
import { jsonAnswer } from '../http/answer.js';
import { acceptNoBody } from '../http/json-body.js';
import { toPublicUser, type PublicUser } from '../users/user.js';
import { setAnswerHeader } from '../http/answer.js';
import { clearSessionCookie, type SessionCookieSettings } from './cookie.js';
import { revokeSession, type SessionDeps, type ValidSession } from './flow.js';
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
    .get('/session', async (c) => jsonAnswer(c, sessionAnswer(await requireSession(c, deps))))
    .get('/forward', async (c) => {
      // The request body is never read (a proxy's subrequest has none); nothing here may be cached
      // on the way: the answer is one person's.
      setAnswerHeader(c, 'Cache-Control', 'no-store');
      const valid = await requireSession(c, deps);
      for (const [name, value] of Object.entries(forwardHeaders(valid))) setAnswerHeader(c, name, value);
      return c.body(null, 200);
    })
    .post('/logout', async (c) => {
      await acceptNoBody(c);
      const valid = await readValidSession(c, deps);
      if (valid !== null) {
        await revokeSession(deps.session, valid.user, valid.session.id, c.get('requestContext').now);
        await recordAudit(deps.audit, c.get('requestContext'), 'logout', valid.user.id, { sessionId: valid.session.id });
      }
      clearSessionCookie(c, deps.cookie);
      return jsonAnswer(c, { ok: true });
    });
}

/** GET /session's answer (the fast path's too: fast-path.ts). */
export function sessionAnswer(valid: ValidSession): { user: PublicUser; session: { id: string; expires: string; methods: readonly string[] } } {
  return {
    user: toPublicUser(valid.user),
    session: { id: valid.session.id, expires: valid.session.expiresAt.toISOString(), methods: valid.session.methods },
  };
}

/** GET /forward's headers for a valid session (the fast path's too). */
export function forwardHeaders(valid: ValidSession): Record<string, string> {
  return {
    'X-Auth-User-Id': valid.user.id,
    // An account without an email (provider sign-in only) sends an empty header: the proxy copies
    // it as is, so the backend never sees a value the client sent itself.
    'X-Auth-Email': valid.user.email ?? '',
    'X-Auth-Methods': valid.session.methods.join(','),
  };
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
    method: 'get',
    path: '/forward',
    tag: 'Session',
    summary: 'Forward-auth for a reverse proxy: 200 with the user in headers for a valid session cookie, 401 otherwise',
    auth: 'session',
    answers: [
      {
        status: 200,
        description: 'The session is valid; the body is empty.',
        headers: {
          'X-Auth-User-Id': 'the user id',
          'X-Auth-Email': 'the email (empty for an account without one)',
          'X-Auth-Methods': 'how the sign-in was proven, comma-separated: password,totp',
        },
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
