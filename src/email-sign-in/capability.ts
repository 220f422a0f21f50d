/** @module Sign-in by email link or code as a capability; expired sign-ins' sweep. */
import { defineCapability } from '../capability.js';
import type { SharedParts } from '../parts.js';
import { createSignInCodeKey, type EmailSignInDeps } from './flow.js';
import { createEmailSignInRoutes, emailSignInRouteDocs } from './routes.js';

/** What sign-in by email needs, also for the page that names the account a link signs into (web). */
export function emailSignInDeps(
  parts: Pick<SharedParts, 'config' | 'jwtSecret' | 'stores' | 'random' | 'limits' | 'loginLock' | 'session' | 'notices' | 'background' | 'emailQueued'>,
): EmailSignInDeps {
  return {
    stores: parts.stores,
    random: parts.random,
    baseUrl: parts.config.baseUrl,
    appName: parts.config.mail.appName,
    defaultLanguage: parts.config.defaultLanguage,
    emailTemplates: parts.config.emailTemplates,
    signup: parts.config.emailSignInSignup,
    codeKey: createSignInCodeKey(parts.jwtSecret),
    limits: parts.limits,
    loginLock: parts.loginLock,
    session: parts.session,
    notices: parts.notices,
    background: parts.background,
    onEmailQueued: parts.emailQueued,
  };
}

export const emailSignIn = defineCapability({
  name: 'email-sign-in',
  routeDocs: [{ prefix: '/api/auth', docs: emailSignInRouteDocs }],
  build: (
    parts: Pick<
      SharedParts,
      | 'config'
      | 'jwtSecret'
      | 'stores'
      | 'random'
      | 'limits'
      | 'loginLock'
      | 'session'
      | 'notices'
      | 'background'
      | 'emailQueued'
      | 'cookie'
      | 'devMode'
      | 'secondFactor'
    >,
  ) => ({
    routes: [
      {
        prefix: '/api/auth',
        routes: createEmailSignInRoutes({
          flow: emailSignInDeps(parts),
          devMode: parts.devMode,
          background: parts.background,
          cookie: parts.cookie,
          challenge: parts.secondFactor.challenge,
        }),
      },
    ],
    sweep: async (now) => ({ emailSignIns: await parts.stores.emailSignIns.deleteExpiredEmailSignIns(now) }),
  }),
});
