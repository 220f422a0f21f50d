/**
 * @module The person's own view of the apps with access: `GET /api/auth/grants` and
 * `DELETE /api/auth/grants/:clientId`, with the session cookie (401 without one). The account
 * page's "Apps with access" section reads and revokes through them. Mounted whether or not the
 * provider runs: without it no app has access (an empty list, and 404 for any app).
 */
import { Hono } from 'hono';
import { z } from 'zod';
import { notFound } from '../errors.js';
import { jsonAnswer } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { acceptNoBody } from '../http/json-body.js';
import { okAnswer, type RouteDoc } from '../http/route-docs.js';
import type { SessionCookieSettings } from '../session/cookie.js';
import type { SessionDeps } from '../session/flow.js';
import { requireSession } from '../session/read-session.js';
import { listAppsWithAccess, revokeAppAccess, type GrantDeps } from './grants.js';

const CLIENT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const NO_ACCESS = 'This app has no access to your account.';

export interface GrantRouteDeps {
  /** Null when the provider does not run (no envelope key). */
  grants: GrantDeps | null;
  session: SessionDeps;
  cookie: SessionCookieSettings;
}

export function createGrantRoutes(deps: GrantRouteDeps): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .get('/grants', async (c) => {
      const signedIn = await requireSession(c, deps);
      const grants = deps.grants === null ? [] : await listAppsWithAccess(deps.grants, signedIn.user.id, c.get('requestContext').now);
      return jsonAnswer(c, { grants });
    })
    .delete('/grants/:clientId', async (c) => {
      await acceptNoBody(c);
      const signedIn = await requireSession(c, deps);
      const clientId = c.req.param('clientId');
      if (!CLIENT_ID.test(clientId) || deps.grants === null) throw notFound(NO_ACCESS);
      await revokeAppAccess(deps.grants, signedIn.user.id, clientId, c.get('requestContext'));
      return jsonAnswer(c, { ok: true });
    });
}

const app = z.object({
  clientId: z.string(),
  clientName: z.string(),
  scopes: z.array(z.string()).describe('openid, email, offline_access'),
  createdAt: z.string().describe('when the first grant was given'),
});

export const grantRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/grants',
    tag: 'Account',
    auth: 'session',
    summary: 'The apps you let sign you in through Gatehouse',
    description: 'One entry per app, with the scopes it was given. Only apps using Gatehouse as their OpenID Connect provider appear.',
    answers: [{ status: 200, description: 'The apps.', json: z.object({ grants: z.array(app) }) }],
  },
  {
    method: 'delete',
    path: '/grants/:clientId',
    tag: 'Account',
    auth: 'session',
    summary: "Withdraw an app's access",
    description:
      'Ends every grant you gave the app: its refresh tokens stop working at once and introspection reports its access tokens inactive. A JWT access token it holds for an API lives until its short expiry. The next sign-in asks for consent again.',
    body: 'none',
    params: z.object({ clientId: z.string().describe("the app's client id") }),
    answers: [{ status: 200, description: 'Withdrawn.', json: okAnswer }],
    errors: ['not_found'],
  },
];
