/** @module POST /verify-email, POST /verify-email/decline and POST /resend-verification. */
import { Hono } from 'hono';
import { z } from 'zod';
import { jsonAnswer } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { acceptNoBody, readJsonBody } from '../http/json-body.js';
import type { SessionCookieSettings } from '../session/cookie.js';
import type { SessionDeps } from '../session/flow.js';
import { readValidSession, requireSession } from '../session/read-session.js';
import { declineAccount, resendVerification, verifyEmail, type VerificationDeps } from './flow.js';
import type { RouteDoc } from '../http/route-docs.js';

// Any string is a candidate token; a malformed one is an invalid token (400 invalid_token).
const verifyBody = z.object({ token: z.string().min(1, 'is required') });

export interface VerificationRouteDeps {
  flow: VerificationDeps;
  session: SessionDeps;
  cookie: SessionCookieSettings;
  devMode: boolean;
}

export function createVerificationRoutes(deps: VerificationRouteDeps): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .post('/verify-email', async (c) => {
      const { token } = await readJsonBody(c, verifyBody);
      // A browser signed in to the account proves the password and the mailbox are one person's.
      await verifyEmail(deps.flow, token, c.get('requestContext'), await readValidSession(c, deps));
      return jsonAnswer(c, { message: 'Your email address is verified.', verified: true });
    })
    .post('/verify-email/decline', async (c) => {
      const { token } = await readJsonBody(c, verifyBody);
      await declineAccount(deps.flow, token, c.get('requestContext'));
      return jsonAnswer(c, { message: 'The account registered with your email address has been deleted.', deleted: true });
    })
    .post('/resend-verification', async (c) => {
      await acceptNoBody(c);
      const { user } = await requireSession(c, deps);
      const outcome = await resendVerification(deps.flow, user, c.get('requestContext'));
      if (outcome.kind === 'already_verified') {
        return jsonAnswer(c, { message: 'Your email address is already verified; there is nothing to resend.', alreadyVerified: true });
      }
      return jsonAnswer(c, {
        message: 'We sent a new verification link to your email address. Earlier links no longer work.',
        ...(deps.devMode ? { verificationToken: outcome.link.token, verificationUrl: outcome.link.url } : {}),
      });
    });
}

export const verificationRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/verify-email',
    tag: 'Email verification',
    summary: "Verify the email address with the link's token",
    body: verifyBody,
    answers: [{ status: 200, description: 'Verified.', json: z.object({ message: z.string(), verified: z.literal(true) }) }],
    errors: ['invalid_token', 'rate_limited'],
  },
  {
    method: 'post',
    path: '/verify-email/decline',
    tag: 'Email verification',
    summary: '"I did not create this account": delete the unverified account',
    body: verifyBody,
    answers: [{ status: 200, description: 'Deleted.', json: z.object({ message: z.string(), deleted: z.literal(true) }) }],
    errors: ['invalid_token', 'rate_limited'],
  },
  {
    method: 'post',
    path: '/resend-verification',
    tag: 'Email verification',
    summary: 'Mail a new verification link',
    auth: 'session',
    body: 'none',
    answers: [
      {
        status: 200,
        description: 'Sent (development mode adds the token and link), or already verified.',
        json: z.object({
          message: z.string(),
          alreadyVerified: z.literal(true).optional(),
          verificationToken: z.string().optional(),
          verificationUrl: z.string().optional(),
        }),
      },
    ],
    errors: ['not_found', 'rate_limited'],
  },
];
