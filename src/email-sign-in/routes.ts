/** @module POST /email-sign-in/request and POST /email-sign-in/verify (DESIGN §9.9). */
import { Hono } from 'hono';
import { z } from 'zod';
import type { BackgroundTasks } from '../background.js';
import { validationError } from '../errors.js';
import { jsonAnswer } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { readJsonBody } from '../http/json-body.js';
import { resolveReturnTo } from '../http/return-to.js';
import { issueChallenge, setChallengeCookie, type ChallengeCookieSettings } from '../mfa/challenge.js';
import { SECOND_FACTOR_METHODS } from '../credentials/second-factor.js';
import { emailSchema } from '../credentials/rules.js';
import type { RandomReader } from '../random.js';
import { setSessionCookie, type SessionCookieSettings } from '../session/cookie.js';
import { limitEmailSignInRequest, requestEmailSignIn, verifyEmailSignInCode, verifyEmailSignInLink, type EmailSignInDeps } from './flow.js';
import { mfaRequiredAnswer, type RouteDoc } from '../http/route-docs.js';

const requestBody = z.object({ email: emailSchema, return_to: z.string().max(2048).optional() });
const verifyBody = z.object({
  token: z.string().min(1, 'is required').max(512).optional(),
  email: emailSchema.optional(),
  code: z.string().min(1, 'is required').max(32).optional(),
});

/** One answer for every address, so the response tells nobody whether an account exists. */
const REQUEST_MESSAGE = 'If this email address can sign in, we sent it a sign-in link and a code.';

export interface EmailSignInRouteDeps {
  flow: EmailSignInDeps;
  devMode: boolean;
  background: BackgroundTasks;
  cookie: SessionCookieSettings;
  /** The second-factor challenge a 2FA account gets instead of a session (mfa/challenge.ts). */
  challenge: { key: Uint8Array; random: RandomReader; cookie: ChallengeCookieSettings; onIssued?: (firstMethod: string) => void };
}

export function createEmailSignInRoutes(deps: EmailSignInRouteDeps): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .post('/email-sign-in/request', async (c) => {
      const body = await readJsonBody(c, requestBody);
      const ctx = c.get('requestContext');
      // Only a path on this origin; anything else is forgotten (no open redirect).
      const returnTo = body.return_to === undefined ? null : resolveReturnTo(body.return_to, '') || null;
      await limitEmailSignInRequest(deps.flow, body.email, ctx);
      const input = { email: body.email, returnTo };
      if (!deps.devMode) {
        // Answer first, the same answer at the same moment for every address; the lookup, the
        // token and the email follow off the response path.
        deps.background.run('email sign-in request', () => requestEmailSignIn(deps.flow, input, ctx));
        return jsonAnswer(c, { message: REQUEST_MESSAGE });
      }
      const issued = await requestEmailSignIn(deps.flow, input, ctx);
      return jsonAnswer(c, { message: REQUEST_MESSAGE, ...(issued ?? {}) });
    })
    .post('/email-sign-in/verify', async (c) => {
      const body = await readJsonBody(c, verifyBody);
      const ctx = c.get('requestContext');
      let outcome;
      if (body.token !== undefined) outcome = await verifyEmailSignInLink(deps.flow, body.token, ctx);
      else if (body.email !== undefined && body.code !== undefined)
        outcome = await verifyEmailSignInCode(deps.flow, { email: body.email, code: body.code }, ctx);
      else throw validationError([{ path: 'token', message: 'send either token, or email and code' }]);
      if (outcome.kind === 'second_factor') {
        const { value } = issueChallenge(deps.challenge.key, deps.challenge.random, {
          userId: outcome.user.id,
          firstMethods: [outcome.method],
          returnTo: outcome.returnTo,
          now: ctx.now,
        });
        setChallengeCookie(c, deps.challenge.cookie, value, ctx.now);
        deps.challenge.onIssued?.(outcome.method);
        return jsonAnswer(c, { ok: true, mfaRequired: true, methods: SECOND_FACTOR_METHODS });
      }
      setSessionCookie(c, deps.cookie, outcome.session.token, outcome.session.expiresAt, ctx.now);
      return jsonAnswer(c, { ok: true, ...(outcome.returnTo !== null ? { returnTo: outcome.returnTo } : {}) });
    });
}

export const emailSignInRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/email-sign-in/request',
    tag: 'Email sign-in',
    summary: 'Mail a sign-in link and a 6-digit code (the same answer for every address)',
    body: requestBody,
    answers: [
      {
        status: 200,
        description: 'The same for every address; development mode adds the token, link and code for a known one.',
        json: z.object({ message: z.string(), token: z.string().optional(), url: z.string().optional(), code: z.string().optional() }),
      },
    ],
    errors: ['rate_limited'],
  },
  {
    method: 'post',
    path: '/email-sign-in/verify',
    tag: 'Email sign-in',
    summary: "Sign in with the link's token, or with the email and the code",
    body: verifyBody,
    answers: [
      {
        status: 200,
        description: 'Signed in (session cookie), or the second step is needed (challenge cookie).',
        json: z.union([z.object({ ok: z.literal(true), returnTo: z.string().optional() }), mfaRequiredAnswer]),
        headers: { 'Set-Cookie': 'the session cookie, or the challenge cookie' },
      },
    ],
    errors: ['invalid_token', 'invalid_code', 'account_disabled', 'rate_limited', 'account_locked'],
  },
];
