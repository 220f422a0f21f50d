/** @module Account self-service as a capability: sessions list, password and email change, linked sign-ins, deletion; pending email changes' sweep. */
import { defineCapability } from '../capability.js';
import { reauthDepsOf } from '../credentials/reauthenticate.js';
import type { SharedParts } from '../parts.js';
import { accountRouteDocs, createAccountRoutes } from './routes.js';

export const account = defineCapability({
  name: 'account',
  routeDocs: [{ prefix: '/api/auth', docs: accountRouteDocs }],
  build: (
    parts: Pick<
      SharedParts,
      | 'config'
      | 'stores'
      | 'hasher'
      | 'breachCheck'
      | 'loginLock'
      | 'limits'
      | 'random'
      | 'notices'
      | 'background'
      | 'emailQueued'
      | 'session'
      | 'cookie'
      | 'devMode'
    >,
  ) => ({
    routes: [
      {
        prefix: '/api/auth',
        routes: createAccountRoutes({
          flow: {
            ...reauthDepsOf(parts),
            breachCheck: parts.breachCheck,
            random: parts.random,
            baseUrl: parts.config.baseUrl,
            appName: parts.config.mail.appName,
            defaultLanguage: parts.config.defaultLanguage,
            emailTemplates: parts.config.emailTemplates,
            onEmailQueued: parts.emailQueued,
          },
          session: parts.session,
          cookie: parts.cookie,
          devMode: parts.devMode,
        }),
      },
    ],
    sweep: async (now) => ({ emailChangeTokens: await parts.stores.emailChangeTokens.deleteExpiredEmailChangeTokens(now) }),
  }),
});
