/** @module POST /password-reset/request and POST /password-reset/confirm. */
import { Hono } from 'hono';
import { z } from 'zod';
import { jsonAnswer } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { readJsonBody } from '../http/json-body.js';
import { emailSchema, newPasswordSchema } from '../credentials/rules.js';
import type { BackgroundTasks } from '../background.js';
import { confirmPasswordReset, limitPasswordResetRequest, requestPasswordReset, type ResetDeps } from './flow.js';
import { messageAnswer, type RouteDoc } from '../http/route-docs.js';

const requestBody = z.object({ email: emailSchema });
const confirmBody = z.object({ token: z.string().min(1, 'is required'), password: newPasswordSchema });

/** One answer for every email, so the response tells nobody whether an account exists. */
const REQUEST_MESSAGE = 'If an account exists for this email address, we sent it a link to reset the password.';

export interface ResetRouteDeps {
  flow: ResetDeps;
  devMode: boolean;
  background: BackgroundTasks;
}

export function createResetRoutes(deps: ResetRouteDeps): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .post('/password-reset/request', async (c) => {
      const { email } = await readJsonBody(c, requestBody);
      const ctx = c.get('requestContext');
      await limitPasswordResetRequest(deps.flow, email, ctx);
      if (!deps.devMode) {
        // Answer first, the same answer at the same moment for every email; the lookup, the
        // token, the email and the audit row follow off the response path.
        deps.background.run('password reset request', () => requestPasswordReset(deps.flow, email, ctx));
        return jsonAnswer(c, { message: REQUEST_MESSAGE });
      }
      const link = await requestPasswordReset(deps.flow, email, ctx);
      return jsonAnswer(c, { message: REQUEST_MESSAGE, ...(link !== null ? { token: link.token, resetUrl: link.url } : {}) });
    })
    .post('/password-reset/confirm', async (c) => {
      const body = await readJsonBody(c, confirmBody);
      await confirmPasswordReset(deps.flow, body, c.get('requestContext'));
      return jsonAnswer(c, { message: 'Your password has been changed. Sign in with your new password.' });
    });
}

export const resetRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/password-reset/request',
    tag: 'Password reset',
    summary: 'Mail a password reset link (the same answer for every email)',
    body: requestBody,
    answers: [
      {
        status: 200,
        description: 'The same for every email; development mode adds the token and link for a known one.',
        json: z.object({ message: z.string(), token: z.string().optional(), resetUrl: z.string().optional() }),
      },
    ],
    errors: ['rate_limited'],
  },
  {
    method: 'post',
    path: '/password-reset/confirm',
    tag: 'Password reset',
    summary: "Set a new password with the link's token",
    body: confirmBody,
    answers: [{ status: 200, description: 'Changed; every session ends.', json: messageAnswer }],
    errors: ['invalid_token', 'rate_limited'],
  },
];
