/** @module POST /register and POST /login: parse, call one flow, answer. */
import { Hono } from 'hono';
import { z } from 'zod';
import { jsonAnswer } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { readJsonBody } from '../http/json-body.js';
import { readDeviceCookie, setDeviceCookie, type DeviceCookieSettings } from '../limits/device-cookie.js';
import { issueChallenge, setChallengeCookie, type ChallengeCookieSettings } from '../mfa/challenge.js';
import { SECOND_FACTOR_METHODS } from '../credentials/second-factor.js';
import type { RandomReader } from '../random.js';
import { setSessionCookie, type SessionCookieSettings } from '../session/cookie.js';
import { loginWithPassword, registerWithPassword, type PasswordFlowDeps } from './flow.js';
import { emailSchema, loginPasswordSchema, newPasswordSchema } from '../credentials/rules.js';
import { mfaRequiredAnswer, type RouteDoc } from '../http/route-docs.js';

const registerBody = z.object({ email: emailSchema, password: newPasswordSchema });
/** The login's body, also read by its fast path (fast-path.ts). */
export const loginBody = z.object({ email: emailSchema, password: loginPasswordSchema });

export interface PasswordRouteDeps {
  flow: PasswordFlowDeps;
  cookie: SessionCookieSettings;
  /** NODE_ENV=development: the verification token and link also come back in the response. */
  devMode: boolean;
  deviceCookie: DeviceCookieSettings;
  /** The second-factor challenge a 2FA account gets instead of a session (mfa/challenge.ts). */
  challenge: { key: Uint8Array; random: RandomReader; cookie: ChallengeCookieSettings; onIssued?: (firstMethod: string) => void };
}

export function createPasswordRoutes(deps: PasswordRouteDeps): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .post('/register', async (c) => {
      const body = await readJsonBody(c, registerBody);
      const ctx = c.get('requestContext');
      const { session, verification } = await registerWithPassword(deps.flow, body, ctx);
      setSessionCookie(c, deps.cookie, session.token, session.expiresAt, ctx.now);
      return jsonAnswer(
        c,
        {
          ok: true,
          message: 'Account created. We sent a link to your email address to verify it.',
          ...(deps.devMode ? { verificationToken: verification.token, verificationUrl: verification.url } : {}),
        },
        201,
      );
    })
    .post('/login', async (c) => {
      const body = await readJsonBody(c, loginBody);
      const ctx = c.get('requestContext');
      const outcome = await loginWithPassword(deps.flow, body, ctx, {
        deviceToken: readDeviceCookie(c, deps.deviceCookie),
      });
      if ('secondFactorFor' in outcome) {
        const { value } = issueChallenge(deps.challenge.key, deps.challenge.random, {
          userId: outcome.secondFactorFor.id,
          firstMethods: ['password'],
          returnTo: null,
          now: ctx.now,
        });
        setChallengeCookie(c, deps.challenge.cookie, value, ctx.now);
        deps.challenge.onIssued?.('password');
        return jsonAnswer(c, { ok: true, mfaRequired: true, methods: SECOND_FACTOR_METHODS });
      }
      const { session, deviceToken } = outcome;
      setSessionCookie(c, deps.cookie, session.token, session.expiresAt, ctx.now);
      setDeviceCookie(c, deps.deviceCookie, deviceToken, ctx.now);
      return jsonAnswer(c, { ok: true });
    });
}

/** For the OpenAPI document (http/route-docs.ts): the same body schemas the handlers validate with. */
export const passwordRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/register',
    tag: 'Password',
    summary: 'Create an account with an email and a password, and sign in',
    body: registerBody,
    answers: [
      {
        status: 201,
        description: 'Created and signed in (session cookie); a verification link is mailed. Development mode adds the token and link.',
        json: z.object({ ok: z.literal(true), message: z.string(), verificationToken: z.string().optional(), verificationUrl: z.string().optional() }),
        headers: { 'Set-Cookie': 'the session cookie' },
      },
    ],
    errors: ['email_exists', 'rate_limited'],
  },
  {
    method: 'post',
    path: '/login',
    tag: 'Password',
    summary: 'Sign in with an email and a password',
    description: 'With two-factor sign-in on, the answer is the challenge cookie and `mfaRequired`, no session: finish with POST /api/auth/2fa/verify.',
    body: loginBody,
    answers: [
      {
        status: 200,
        description: 'Signed in (session and device cookies), or the second step is needed (challenge cookie).',
        json: z.union([z.object({ ok: z.literal(true) }), mfaRequiredAnswer]),
        headers: { 'Set-Cookie': 'the session and device cookies, or the challenge cookie' },
      },
    ],
    errors: ['invalid_credentials', 'account_disabled', 'rate_limited', 'account_locked'],
  },
];
