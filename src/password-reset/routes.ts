/** @module POST /password-reset/request and POST /password-reset/confirm. */
import { Hono } from 'hono';
import { z } from 'zod';
import { jsonAnswer } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { readJsonBody } from '../http/json-body.js';
import { emailSchema, newPasswordSchema } from '../password/rules.js';
import type { BackgroundTasks } from '../background.js';
import { confirmPasswordReset, limitPasswordResetRequest, requestPasswordReset, type ResetDeps } from './flow.js';

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
