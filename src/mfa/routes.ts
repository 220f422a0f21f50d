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
import { loginPasswordSchema } from '../password/rules.js';
import { setSessionCookie, type SessionCookieSettings } from '../session/cookie.js';
import type { SessionDeps } from '../session/flow.js';
import { requireSession } from '../session/read-session.js';
import { clearChallengeCookie, readChallengeCookie, type ChallengeCookieSettings } from './challenge.js';
import { disableTotp, enableTotp, mfaStatus, regenerateRecoveryCodes, startTotpSetup, verifySecondFactor, type MfaDeps } from './flow.js';

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
