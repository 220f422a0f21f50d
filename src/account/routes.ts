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
import { emailSchema, loginPasswordSchema, newPasswordSchema } from '../credentials/rules.js';
import { clearSessionCookie, type SessionCookieSettings } from '../session/cookie.js';
import type { SessionDeps } from '../session/flow.js';
import { readValidSession, requireSession } from '../session/read-session.js';
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
import { messageAnswer, okAnswer, type RouteDoc } from '../http/route-docs.js';

// `currentPassword` may be absent: an account without a password re-authenticates by a recent
// sign-in instead, and one with a password then gets 403 reauthentication_required.
const currentPassword = loginPasswordSchema.optional();
const reauthenticationBody = z.object({ currentPassword });
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
      // The session presenting the link (if it is the account's own) is the one that stays.
      await confirmEmailChange(deps.flow, token, c.get('requestContext'), await readValidSession(c, deps));
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
      const signedIn = await requireSession(c, deps);
      const provider = c.req.param('provider');
      if (!PROVIDER_ID.test(provider)) throw notFound('No such linked sign-in.');
      // A DELETE carries the re-authentication in a JSON body, as the other sensitive actions do.
      const body = await readJsonBody(c, reauthenticationBody);
      await unlinkProvider(deps.flow, signedIn, { provider, currentPassword: body.currentPassword }, c.get('requestContext'));
      return jsonAnswer(c, { ok: true });
    });
}

const sessionIdParam = z.object({ id: z.string().regex(SESSION_ID).describe("one of this user's session ids") });
const providerParam = z.object({ provider: z.string().regex(PROVIDER_ID).describe('a linked provider id: github, or one of OIDC_PROVIDERS') });

export const accountRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/sessions',
    tag: 'Account',
    summary: "This user's unexpired sessions, newest first",
    auth: 'session',
    answers: [
      {
        status: 200,
        description: 'The sessions.',
        json: z.object({
          sessions: z.array(
            z.object({
              id: z.string(),
              current: z.boolean(),
              createdAt: z.string(),
              expiresAt: z.string(),
              lastSeenAt: z.string().nullable(),
              ip: z.string().nullable(),
              userAgent: z.string().nullable(),
              browser: z
                .string()
                .nullable()
                .describe("The browser userAgent names (bowser's name: Chrome, Firefox, Safari, Microsoft Edge…); null when unknown"),
              os: z.string().nullable().describe('The operating system userAgent names (Linux, Windows, macOS, iOS, Android…); null when unknown'),
            }),
          ),
        }),
      },
    ],
  },
  {
    method: 'delete',
    path: '/sessions/:id',
    tag: 'Account',
    summary: 'End one session (the current one: signed out)',
    auth: 'session',
    body: 'none',
    params: sessionIdParam,
    answers: [{ status: 200, description: 'Ended.', json: okAnswer }],
    errors: ['not_found'],
  },
  {
    method: 'post',
    path: '/sessions/revoke-others',
    tag: 'Account',
    summary: 'End every other session of this user',
    auth: 'session',
    body: 'none',
    answers: [{ status: 200, description: 'How many ended.', json: z.object({ revoked: z.number().int() }) }],
  },
  {
    method: 'post',
    path: '/password/change',
    tag: 'Account',
    summary: 'Change the password; every other session ends',
    auth: 'session',
    body: passwordChangeBody,
    answers: [{ status: 200, description: 'Changed.', json: messageAnswer }],
    errors: ['password_not_set', 'invalid_credentials', 'reauthentication_required', 'account_locked'],
  },
  {
    method: 'post',
    path: '/email/change',
    tag: 'Account',
    summary: 'Ask to change the email address: a link goes to the new one',
    auth: 'session',
    body: emailChangeBody,
    answers: [
      {
        status: 200,
        description: 'The link is mailed; development mode adds it.',
        json: z.object({ message: z.string(), token: z.string().optional(), confirmUrl: z.string().optional() }),
      },
    ],
    errors: ['invalid_credentials', 'reauthentication_required', 'email_exists', 'rate_limited', 'account_locked'],
  },
  {
    method: 'post',
    path: '/email/change/confirm',
    tag: 'Account',
    summary: "Confirm an email change with the link's token (no session needed)",
    body: confirmBody,
    answers: [{ status: 200, description: 'The address is changed and verified.', json: z.object({ message: z.string(), changed: z.literal(true) }) }],
    errors: ['invalid_token', 'email_exists', 'rate_limited'],
  },
  {
    method: 'post',
    path: '/account/delete',
    tag: 'Account',
    summary: 'Delete the account and everything of it',
    auth: 'session',
    body: deleteBody,
    answers: [{ status: 200, description: 'Deleted; the cookie is cleared.', json: z.object({ message: z.string(), deleted: z.literal(true) }) }],
    errors: ['invalid_credentials', 'reauthentication_required', 'account_locked'],
  },
  {
    method: 'get',
    path: '/accounts',
    tag: 'Account',
    summary: 'The linked sign-in providers, and whether a password is set',
    auth: 'session',
    answers: [
      {
        status: 200,
        description: 'The linked sign-ins.',
        json: z.object({ hasPassword: z.boolean(), accounts: z.array(z.object({ provider: z.string(), login: z.string().nullable(), linkedAt: z.string() })) }),
      },
    ],
  },
  {
    method: 'delete',
    path: '/accounts/:provider',
    tag: 'Account',
    summary: 'Unlink a sign-in provider (re-authenticated)',
    auth: 'session',
    body: reauthenticationBody,
    params: providerParam,
    answers: [{ status: 200, description: 'Unlinked.', json: okAnswer }],
    errors: ['not_found', 'last_sign_in_method', 'invalid_credentials', 'reauthentication_required', 'account_locked', 'rate_limited'],
  },
];
