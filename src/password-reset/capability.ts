/** @module Password reset as a capability: request and confirm; spent tokens' sweep. */
import { defineCapability } from '../capability.js';
import { createSecretHasher } from '../credentials/hasher.js';
import type { SharedParts } from '../parts.js';
import { RESET_TOKEN_BCRYPT_ROUNDS } from './flow.js';
import { createResetRoutes, resetRouteDocs } from './routes.js';

export const passwordReset = defineCapability({
  name: 'password-reset',
  routeDocs: [{ prefix: '/api/auth', docs: resetRouteDocs }],
  build: (
    parts: Pick<
      SharedParts,
      'config' | 'stores' | 'random' | 'hasher' | 'hashPool' | 'breachCheck' | 'emailQueued' | 'limits' | 'loginLock' | 'logger' | 'background' | 'devMode'
    >,
  ) => ({
    routes: [
      {
        prefix: '/api/auth',
        routes: createResetRoutes({
          flow: {
            stores: parts.stores,
            random: parts.random,
            baseUrl: parts.config.baseUrl,
            appName: parts.config.mail.appName,
            defaultLanguage: parts.config.defaultLanguage,
            emailTemplates: parts.config.emailTemplates,
            hasher: parts.hasher,
            breachCheck: parts.breachCheck,
            tokenHasher: createSecretHasher(parts.hashPool, RESET_TOKEN_BCRYPT_ROUNDS),
            onEmailQueued: parts.emailQueued,
            limits: parts.limits,
            clearLoginFailures: (email, now) => parts.loginLock.clearEmail(email, now),
            notices: { limits: parts.limits, logger: parts.logger },
          },
          devMode: parts.devMode,
          background: parts.background,
        }),
      },
    ],
    sweep: async (now) => ({ resetTokens: await parts.stores.resetTokens.deleteSpentResetTokens(now) }),
  }),
});
