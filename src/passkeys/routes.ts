/**
 * @module The passkey endpoints (DESIGN §9.4): registration, list, rename and removal for a
 * signed-in person; the two steps of a passkey sign-in for anyone, carried by the challenge cookie.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import { notFound } from '../errors.js';
import { jsonAnswer } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { acceptNoBody, readJsonBody } from '../http/json-body.js';
import { mfaRequiredAnswer, type RouteDoc } from '../http/route-docs.js';
import { issueChallenge, setChallengeCookie, type ChallengeCookieSettings } from '../mfa/challenge.js';
import { SECOND_FACTOR_METHODS } from '../credentials/second-factor.js';
import { loginPasswordSchema } from '../credentials/rules.js';
import type { RandomReader } from '../random.js';
import { setSessionCookie, type SessionCookieSettings } from '../session/cookie.js';
import type { SessionDeps } from '../session/flow.js';
import { requireSession } from '../session/read-session.js';
import { clearPasskeyChallengeCookie, readPasskeyChallengeCookie, setPasskeyChallengeCookie, type PasskeyCookieSettings } from './challenge.js';
import {
  finishPasskeyLogin,
  finishPasskeyRegistration,
  listPasskeys,
  PASSKEY_METHOD,
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
const renameBody = z.object({ name, currentPassword: loginPasswordSchema.optional() });
// A DELETE carries the re-authentication in a JSON body, as the other sensitive actions do.
const removeBody = z.object({ currentPassword: loginPasswordSchema.optional() });

export interface PasskeyRouteDeps {
  flow: PasskeyDeps;
  session: SessionDeps;
  cookie: SessionCookieSettings;
  passkeyCookie: PasskeyCookieSettings;
  /** The second-factor challenge a sign-in without user verification gets for a 2FA account (mfa/challenge.ts). */
  challenge: { key: Uint8Array; random: RandomReader; cookie: ChallengeCookieSettings; onIssued?: (firstMethod: string) => void };
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
      return jsonAnswer(c, { passkey: await renamePasskey(deps.flow, signedIn, { id, ...body }, c.get('requestContext')) });
    })
    .delete('/passkeys/:id', async (c) => {
      const signedIn = await requireSession(c, deps);
      const id = passkeyId(c.req.param('id'));
      const { currentPassword } = await readJsonBody(c, removeBody);
      await removePasskey(deps.flow, signedIn, { id, currentPassword }, c.get('requestContext'));
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
      const outcome = await finishPasskeyLogin(deps.flow, challenge, body.response, ctx);
      if (outcome.kind === 'second_factor') {
        const { value } = issueChallenge(deps.challenge.key, deps.challenge.random, {
          userId: outcome.user.id,
          firstMethods: [PASSKEY_METHOD],
          returnTo: null,
          now: ctx.now,
        });
        setChallengeCookie(c, deps.challenge.cookie, value, ctx.now);
        deps.challenge.onIssued?.(PASSKEY_METHOD);
        return jsonAnswer(c, { ok: true, mfaRequired: true, methods: SECOND_FACTOR_METHODS });
      }
      setSessionCookie(c, deps.cookie, outcome.session.token, outcome.session.expiresAt, ctx.now);
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
    errors: ['invalid_credentials', 'reauthentication_required', 'account_locked', 'rate_limited', 'email_not_verified', 'passkey_limit_reached'],
  },
  {
    method: 'post',
    path: '/passkeys/register/verify',
    tag: 'Passkeys',
    summary: "Finish adding a passkey with the authenticator's response",
    auth: 'session',
    body: registerVerifyBody,
    answers: [{ status: 200, description: 'The new passkey (audited passkey_added).', json: z.object({ passkey: passkeyAnswer }) }],
    errors: [['passkey_invalid', 400], ['passkey_invalid', 409], ['passkey_challenge_invalid', 400], 'passkey_limit_reached'],
  },
  {
    method: 'patch',
    path: '/passkeys/:id',
    tag: 'Passkeys',
    summary: 'Rename a passkey (re-authenticated)',
    auth: 'session',
    body: renameBody,
    params: passkeyIdParam,
    answers: [{ status: 200, description: 'Renamed (audited passkey_renamed).', json: z.object({ passkey: passkeyAnswer }) }],
    errors: ['not_found', 'invalid_credentials', 'reauthentication_required', 'account_locked', 'rate_limited'],
  },
  {
    method: 'delete',
    path: '/passkeys/:id',
    tag: 'Passkeys',
    summary: 'Remove a passkey (re-authenticated; never the last way in)',
    auth: 'session',
    body: removeBody,
    params: passkeyIdParam,
    answers: [{ status: 200, description: 'Removed (audited passkey_removed).', json: z.object({ ok: z.literal(true) }) }],
    errors: ['not_found', 'last_sign_in_method', 'invalid_credentials', 'reauthentication_required', 'account_locked', 'rate_limited'],
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
    summary:
      'Sign in with the authenticator\'s assertion: with user verification, the session with methods ["passkey", "user_verification"]; without it, ["passkey"], or the code step for a 2FA account',
    body: loginVerifyBody,
    answers: [
      {
        status: 200,
        description: 'Signed in (session cookie), or the second step is needed (challenge cookie).',
        json: z.union([z.object({ ok: z.literal(true) }), mfaRequiredAnswer]),
        headers: { 'Set-Cookie': 'the session cookie, or the challenge cookie' },
      },
    ],
    errors: ['passkey_invalid', 'passkey_challenge_invalid', 'account_disabled', 'rate_limited'],
  },
];
