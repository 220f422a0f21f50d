/**
 * @module The two-factor endpoints (DESIGN §9.3): setup, enable, disable and recovery codes for
 * a signed-in person, and `POST /2fa/verify`, the second step of a sign-in, which needs the
 * challenge cookie instead of a session.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import { jsonAnswer } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { readJsonBody } from '../http/json-body.js';
import { loginPasswordSchema } from '../credentials/rules.js';
import { setSessionCookie, type SessionCookieSettings } from '../session/cookie.js';
import type { SessionDeps } from '../session/flow.js';
import { requireSession } from '../session/read-session.js';
import { clearChallengeCookie, readChallengeCookie, type ChallengeCookieSettings } from './challenge.js';
import { disableTotp, enableTotp, mfaStatus, regenerateRecoveryCodes, startTotpSetup, verifySecondFactor, type MfaDeps } from './flow.js';
import { okAnswer, type RouteDoc } from '../http/route-docs.js';

const currentPasswordBody = z.object({ currentPassword: loginPasswordSchema.optional() });
// Any short string is a candidate: a malformed code is a wrong code (401 invalid_code), counted.
const code = z.string().min(1, 'is required').max(64, 'is too long');
const enableBody = z.object({ code });
const verifyBody = z
  .object({ code: code.optional(), recoveryCode: code.optional() })
  .refine((body) => (body.code === undefined) !== (body.recoveryCode === undefined), { message: 'needs either code or recoveryCode', path: ['code'] });

export interface MfaRouteDeps {
  flow: MfaDeps;
  session: SessionDeps;
  cookie: SessionCookieSettings;
  challengeCookie: ChallengeCookieSettings;
}

export function createMfaRoutes(deps: MfaRouteDeps): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .get('/2fa', async (c) => {
      const signedIn = await requireSession(c, deps);
      return jsonAnswer(c, await mfaStatus(deps.flow, signedIn.user.id));
    })
    .post('/2fa/totp/setup', async (c) => {
      const signedIn = await requireSession(c, deps);
      const { currentPassword } = await readJsonBody(c, currentPasswordBody);
      return jsonAnswer(c, await startTotpSetup(deps.flow, signedIn, currentPassword, c.get('requestContext')));
    })
    .post('/2fa/totp/enable', async (c) => {
      const signedIn = await requireSession(c, deps);
      const body = await readJsonBody(c, enableBody);
      return jsonAnswer(c, await enableTotp(deps.flow, signedIn, body.code, c.get('requestContext')));
    })
    .post('/2fa/totp/disable', async (c) => {
      const signedIn = await requireSession(c, deps);
      const { currentPassword } = await readJsonBody(c, currentPasswordBody);
      await disableTotp(deps.flow, signedIn, currentPassword, c.get('requestContext'));
      return jsonAnswer(c, { ok: true, message: 'Two-factor sign-in is off.' });
    })
    .post('/2fa/recovery-codes', async (c) => {
      const signedIn = await requireSession(c, deps);
      const { currentPassword } = await readJsonBody(c, currentPasswordBody);
      return jsonAnswer(c, await regenerateRecoveryCodes(deps.flow, signedIn, currentPassword, c.get('requestContext')));
    })
    .post('/2fa/verify', async (c) => {
      const body = await readJsonBody(c, verifyBody);
      const ctx = c.get('requestContext');
      const { session, challenge } = await verifySecondFactor(deps.flow, readChallengeCookie(c, deps.challengeCookie), body, ctx);
      clearChallengeCookie(c, deps.challengeCookie);
      setSessionCookie(c, deps.cookie, session.token, session.expiresAt, ctx.now);
      return jsonAnswer(c, { ok: true, ...(challenge.returnTo !== null ? { returnTo: challenge.returnTo } : {}) });
    });
}

const recoveryCodesAnswer = z.object({ recoveryCodes: z.array(z.string()).describe('shown once') });

export const mfaRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/2fa',
    tag: 'Two-factor',
    summary: 'Whether two-factor sign-in is on, and how many recovery codes are left',
    auth: 'session',
    answers: [{ status: 200, description: 'The state.', json: z.object({ totp: z.object({ enabled: z.boolean() }), recoveryCodesLeft: z.number().int() }) }],
  },
  {
    method: 'post',
    path: '/2fa/totp/setup',
    tag: 'Two-factor',
    summary: 'Start setting up an authenticator app: a secret, its otpauth URL and a QR code',
    auth: 'session',
    body: currentPasswordBody,
    answers: [
      { status: 200, description: 'Nothing is enforced until enabled.', json: z.object({ secret: z.string(), otpauthUrl: z.string(), qrSvg: z.string() }) },
    ],
    errors: ['invalid_credentials', 'reauthentication_required', 'email_not_verified', 'mfa_already_enabled', 'account_locked'],
  },
  {
    method: 'post',
    path: '/2fa/totp/enable',
    tag: 'Two-factor',
    summary: "Turn two-factor sign-in on with the app's current code",
    auth: 'session',
    body: enableBody,
    answers: [{ status: 200, description: 'On; ten recovery codes.', json: recoveryCodesAnswer }],
    errors: [['invalid_code', 400], 'mfa_not_enabled', 'mfa_already_enabled'],
  },
  {
    method: 'post',
    path: '/2fa/totp/disable',
    tag: 'Two-factor',
    summary: 'Turn two-factor sign-in off',
    auth: 'session',
    body: currentPasswordBody,
    answers: [{ status: 200, description: 'Off.', json: z.object({ ok: z.literal(true), message: z.string() }) }],
    errors: ['invalid_credentials', 'reauthentication_required', 'mfa_not_enabled', 'account_locked'],
  },
  {
    method: 'post',
    path: '/2fa/recovery-codes',
    tag: 'Two-factor',
    summary: 'A new set of recovery codes; the old set stops working',
    auth: 'session',
    body: currentPasswordBody,
    answers: [{ status: 200, description: 'The new set.', json: recoveryCodesAnswer }],
    errors: ['invalid_credentials', 'reauthentication_required', 'mfa_not_enabled', 'account_locked'],
  },
  {
    method: 'post',
    path: '/2fa/verify',
    tag: 'Two-factor',
    summary: 'The second step of a sign-in: a code from the app, or a recovery code',
    auth: 'challenge',
    body: verifyBody,
    answers: [
      {
        status: 200,
        description: 'Signed in (session cookie); the challenge cookie is cleared.',
        json: okAnswer.extend({ returnTo: z.string().optional() }),
        headers: { 'Set-Cookie': 'the session cookie' },
      },
    ],
    errors: ['invalid_code', 'not_authenticated', 'account_disabled', 'rate_limited', 'account_locked'],
  },
];
