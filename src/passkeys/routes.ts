/**
 * @module The passkey endpoints (DESIGN §9.4): registration, list, rename and removal for a
 * signed-in person; the two steps of a passkey sign-in for anyone, carried by the challenge cookie.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import { notFound } from '../errors.js';
import { jsonAnswer } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import type { RouteDoc } from '../http/route-docs.js';
import { acceptNoBody, readJsonBody } from '../http/json-body.js';
import { loginPasswordSchema } from '../password/rules.js';
import { setSessionCookie, type SessionCookieSettings } from '../session/cookie.js';
import type { SessionDeps } from '../session/flow.js';
import { requireSession } from '../session/read-session.js';
import { clearPasskeyChallengeCookie, readPasskeyChallengeCookie, setPasskeyChallengeCookie, type PasskeyCookieSettings } from './challenge.js';
import {
  finishPasskeyLogin,
  finishPasskeyRegistration,
  listPasskeys,
  removePasskey,
  renamePasskey,
  startPasskeyLogin,
  startPasskeyRegistration,
  type PasskeyDeps,
} from './flow.js';

/** Passkey ids are UUIDs: only an id of that form reaches the database (as SESSION_ID in account/routes.ts). */
const PASSKEY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const base64url = (max: number) =>
  z
    .string()
    .min(1, 'is required')
    .max(max, 'is too long')
    .regex(/^[A-Za-z0-9_-]+$/, 'must be base64url');
const credentialId = base64url(1400);
const name = z
  .string()
  .trim()
  .min(1, 'is required')
  .max(64, 'must be at most 64 characters')
  .refine((value) => ![...value].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f), 'must not contain control characters');
const extensions = z.record(z.string(), z.unknown()).optional();

const registerOptionsBody = z.object({ currentPassword: loginPasswordSchema.optional() });
const registerVerifyBody = z.object({
  response: z.object({
    id: credentialId,
    rawId: credentialId,
    type: z.literal('public-key'),
    response: z.object({
      clientDataJSON: base64url(4096),
      attestationObject: base64url(12_000),
      transports: z.array(z.string().max(32)).max(10).optional(),
    }),
    clientExtensionResults: extensions,
    authenticatorAttachment: z.string().max(32).optional(),
  }),
  name: name.optional(),
});
const loginVerifyBody = z.object({
  response: z.object({
    id: credentialId,
    rawId: credentialId,
    type: z.literal('public-key'),
    response: z.object({
      clientDataJSON: base64url(4096),
      authenticatorData: base64url(4096),
      signature: base64url(1024),
      userHandle: z.union([base64url(128), z.literal(''), z.null()]).optional(),
    }),
    clientExtensionResults: extensions,
    authenticatorAttachment: z.string().max(32).optional(),
  }),
});
const renameBody = z.object({ name });

export interface PasskeyRouteDeps {
  flow: PasskeyDeps;
  session: SessionDeps;
  cookie: SessionCookieSettings;
  passkeyCookie: PasskeyCookieSettings;
}

export function createPasskeyRoutes(deps: PasskeyRouteDeps): Hono<AppEnv> {
  const passkeyId = (id: string): string => {
    if (!PASSKEY_ID.test(id)) throw notFound('No such passkey.');
    return id;
  };
  return new Hono<AppEnv>()
    .get('/passkeys', async (c) => {
      const signedIn = await requireSession(c, deps);
      return jsonAnswer(c, { passkeys: await listPasskeys(deps.flow, signedIn.user.id) });
    })
    .post('/passkeys/register/options', async (c) => {
      const signedIn = await requireSession(c, deps);
      const { currentPassword } = await readJsonBody(c, registerOptionsBody);
      const ctx = c.get('requestContext');
      const { options, challengeCookie } = await startPasskeyRegistration(deps.flow, signedIn, currentPassword, ctx);
      setPasskeyChallengeCookie(c, deps.passkeyCookie, 'register', challengeCookie, ctx.now);
      return jsonAnswer(c, options);
    })
    .post('/passkeys/register/verify', async (c) => {
      const signedIn = await requireSession(c, deps);
      const body = await readJsonBody(c, registerVerifyBody);
      const challenge = readPasskeyChallengeCookie(c, deps.passkeyCookie, 'register');
      // Spent by this try whatever its outcome: the cookie goes with it.
      clearPasskeyChallengeCookie(c, deps.passkeyCookie, 'register');
      return jsonAnswer(c, await finishPasskeyRegistration(deps.flow, signedIn, challenge, body, c.get('requestContext')));
    })
    .patch('/passkeys/:id', async (c) => {
      const signedIn = await requireSession(c, deps);
      const id = passkeyId(c.req.param('id'));
      const body = await readJsonBody(c, renameBody);
      return jsonAnswer(c, { passkey: await renamePasskey(deps.flow, signedIn, id, body.name, c.get('requestContext')) });
    })
    .delete('/passkeys/:id', async (c) => {
      await acceptNoBody(c);
      const signedIn = await requireSession(c, deps);
      await removePasskey(deps.flow, signedIn, passkeyId(c.req.param('id')), c.get('requestContext'));
      return jsonAnswer(c, { ok: true });
    })
    .post('/passkeys/login/options', async (c) => {
      await acceptNoBody(c);
      const ctx = c.get('requestContext');
      const { options, challengeCookie } = await startPasskeyLogin(deps.flow, ctx);
      setPasskeyChallengeCookie(c, deps.passkeyCookie, 'login', challengeCookie, ctx.now);
      return jsonAnswer(c, options);
    })
    .post('/passkeys/login/verify', async (c) => {
      const body = await readJsonBody(c, loginVerifyBody);
      const ctx = c.get('requestContext');
      const challenge = readPasskeyChallengeCookie(c, deps.passkeyCookie, 'login');
      clearPasskeyChallengeCookie(c, deps.passkeyCookie, 'login');
      const { session } = await finishPasskeyLogin(deps.flow, challenge, body.response, ctx);
      setSessionCookie(c, deps.cookie, session.token, session.expiresAt, ctx.now);
      return jsonAnswer(c, { ok: true });
    });
}

const passkeyAnswer = z.object({ id: z.string(), name: z.string(), createdAt: z.string(), lastUsedAt: z.string().nullable() });
const passkeyIdParam = z.object({ id: z.string().regex(PASSKEY_ID).describe("one of this user's passkey ids (UUID)") });
/** WebAuthn options as @simplewebauthn/server gives them (PublicKeyCredential*OptionsJSON), passed to the browser as they are. */
const webAuthnOptions = z.object({ challenge: z.string() }).catchall(z.unknown());

export const passkeyRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/passkeys',
    tag: 'Passkeys',
    summary: "This user's passkeys, oldest first",
    auth: 'session',
    answers: [{ status: 200, description: 'The passkeys.', json: z.object({ passkeys: z.array(passkeyAnswer) }) }],
  },
  {
    method: 'post',
    path: '/passkeys/register/options',
    tag: 'Passkeys',
    summary: 'Start adding a passkey (re-authenticated): the creation options and the registration challenge cookie',
    auth: 'session',
    body: registerOptionsBody,
    answers: [
      {
        status: 200,
        description: 'PublicKeyCredentialCreationOptionsJSON.',
        json: webAuthnOptions,
        headers: { 'Set-Cookie': 'the registration challenge (5 minutes)' },
      },
    ],
    errors: ['invalid_credentials', 'reauthentication_required', 'account_locked'],
  },
  {
    method: 'post',
    path: '/passkeys/register/verify',
    tag: 'Passkeys',
    summary: "Finish adding a passkey with the authenticator's response",
    auth: 'session',
    body: registerVerifyBody,
    answers: [{ status: 200, description: 'The new passkey (audited passkey_added).', json: z.object({ passkey: passkeyAnswer }) }],
    errors: [
      ['passkey_invalid', 400],
      ['passkey_invalid', 409],
      ['passkey_challenge_invalid', 400],
    ],
  },
  {
    method: 'patch',
    path: '/passkeys/:id',
    tag: 'Passkeys',
    summary: 'Rename a passkey',
    auth: 'session',
    body: renameBody,
    params: passkeyIdParam,
    answers: [{ status: 200, description: 'Renamed (audited passkey_renamed).', json: z.object({ passkey: passkeyAnswer }) }],
    errors: ['not_found'],
  },
  {
    method: 'delete',
    path: '/passkeys/:id',
    tag: 'Passkeys',
    summary: 'Remove a passkey (never the last way in)',
    auth: 'session',
    body: 'none',
    params: passkeyIdParam,
    answers: [{ status: 200, description: 'Removed (audited passkey_removed).', json: z.object({ ok: z.literal(true) }) }],
    errors: ['not_found', 'last_sign_in_method'],
  },
  {
    method: 'post',
    path: '/passkeys/login/options',
    tag: 'Passkeys',
    summary: 'Start a passkey sign-in (discoverable credentials): the request options and the sign-in challenge cookie',
    body: 'none',
    answers: [
      {
        status: 200,
        description: 'PublicKeyCredentialRequestOptionsJSON.',
        json: webAuthnOptions,
        headers: { 'Set-Cookie': 'the sign-in challenge (5 minutes)' },
      },
    ],
    errors: ['rate_limited'],
  },
  {
    method: 'post',
    path: '/passkeys/login/verify',
    tag: 'Passkeys',
    summary: 'Sign in with the authenticator\'s assertion: the session, methods ["passkey"], no second factor',
    body: loginVerifyBody,
    answers: [{ status: 200, description: 'Signed in.', json: z.object({ ok: z.literal(true) }), headers: { 'Set-Cookie': 'the session cookie' } }],
    errors: ['passkey_invalid', 'passkey_challenge_invalid', 'account_disabled', 'rate_limited'],
  },
];
