/**
 * @module The account self-service endpoints (DESIGN §9.2): sessions, password, email, deletion,
 * linked sign-ins. Each needs the session cookie (401 `not_authenticated` otherwise), except the
 * email change confirm, where the token is the proof.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import { notFound } from '../errors.js';
import { jsonAnswer } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { acceptNoBody, readJsonBody } from '../http/json-body.js';
import { emailSchema, loginPasswordSchema, newPasswordSchema } from '../password/rules.js';
import { clearSessionCookie, type SessionCookieSettings } from '../session/cookie.js';
import type { SessionDeps } from '../session/flow.js';
import { requireSession } from '../session/read-session.js';
import {
  changePassword,
  confirmEmailChange,
  deleteAccount,
  listLinkedSignIns,
  listSessions,
  requestEmailChange,
  revokeOneSession,
  revokeOtherSessions,
  unlinkProvider,
  type AccountDeps,
} from './flow.js';

// `currentPassword` may be absent: an account without a password re-authenticates by a recent
// sign-in instead, and one with a password then gets 403 reauthentication_required.
const currentPassword = loginPasswordSchema.optional();
const passwordChangeBody = z.object({ currentPassword, newPassword: newPasswordSchema });
const emailChangeBody = z.object({ newEmail: emailSchema, currentPassword });
const confirmBody = z.object({ token: z.string().min(1, 'is required') });
const deleteBody = z.object({ currentPassword });
/** Session ids are UUIDs; provider ids are short lower-case names (config.ts checks OIDC_PROVIDERS the same way). */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PROVIDER_ID = /^[a-z][a-z0-9_]{0,31}$/;

export interface AccountRouteDeps {
  flow: AccountDeps;
  session: SessionDeps;
  cookie: SessionCookieSettings;
  devMode: boolean;
}

export function createAccountRoutes(deps: AccountRouteDeps): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .get('/sessions', async (c) => {
      const signedIn = await requireSession(c, deps);
      return jsonAnswer(c, { sessions: await listSessions(deps.flow, signedIn, c.get('requestContext').now) });
    })
    .delete('/sessions/:id', async (c) => {
      await acceptNoBody(c);
      const signedIn = await requireSession(c, deps);
      const id = c.req.param('id');
      // Only an id of the form we issue reaches the database (a NUL byte, for one, is an error in PostgreSQL).
      if (!SESSION_ID.test(id)) throw notFound('No such session.');
      const wasCurrent = await revokeOneSession(deps.flow, signedIn, id, c.get('requestContext'));
      if (wasCurrent) clearSessionCookie(c, deps.cookie);
      return jsonAnswer(c, { ok: true });
    })
    .post('/sessions/revoke-others', async (c) => {
      await acceptNoBody(c);
      const signedIn = await requireSession(c, deps);
      return jsonAnswer(c, { revoked: await revokeOtherSessions(deps.flow, signedIn, c.get('requestContext')) });
    })
    .post('/password/change', async (c) => {
      const signedIn = await requireSession(c, deps);
      const body = await readJsonBody(c, passwordChangeBody);
      await changePassword(deps.flow, signedIn, body, c.get('requestContext'));
      return jsonAnswer(c, { message: 'Your password is changed. Every other session was signed out.' });
    })
    .post('/email/change', async (c) => {
      const signedIn = await requireSession(c, deps);
      const body = await readJsonBody(c, emailChangeBody);
      const link = await requestEmailChange(deps.flow, signedIn, body, c.get('requestContext'));
      return jsonAnswer(c, {
        message: 'We sent a link to the new address. Your address changes once it is followed.',
        ...(deps.devMode ? { token: link.token, confirmUrl: link.url } : {}),
      });
    })
    .post('/email/change/confirm', async (c) => {
      const { token } = await readJsonBody(c, confirmBody);
      await confirmEmailChange(deps.flow, token, c.get('requestContext'));
      return jsonAnswer(c, { message: 'Your email address is changed and verified.', changed: true });
    })
    .post('/account/delete', async (c) => {
      const signedIn = await requireSession(c, deps);
      const body = await readJsonBody(c, deleteBody);
      await deleteAccount(deps.flow, signedIn, body, c.get('requestContext'));
      clearSessionCookie(c, deps.cookie);
      return jsonAnswer(c, { message: 'Your account and everything of it are deleted.', deleted: true });
    })
    .get('/accounts', async (c) => {
      const signedIn = await requireSession(c, deps);
      return jsonAnswer(c, await listLinkedSignIns(deps.flow, signedIn));
    })
    .delete('/accounts/:provider', async (c) => {
      await acceptNoBody(c);
      const signedIn = await requireSession(c, deps);
      const provider = c.req.param('provider');
      if (!PROVIDER_ID.test(provider)) throw notFound('No such linked sign-in.');
      await unlinkProvider(deps.flow, signedIn, provider, c.get('requestContext'));
      return jsonAnswer(c, { ok: true });
    });
}
