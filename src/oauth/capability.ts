/** @module Sign-in with GitHub and any OpenID Connect provider as a capability; spent sign-ins' and waiting links' sweep. */
import { defineCapability } from '../capability.js';
import type { SharedParts } from '../parts.js';
import { completePendingLink } from './flow.js';
import { createOAuthRoutes, oauthRouteDocs } from './routes.js';
import { createOAuthSetup } from './setup.js';

export const providers = defineCapability({
  name: 'providers',
  routeDocs: [{ prefix: '/api/auth', docs: oauthRouteDocs }],
  build: (
    parts: Pick<
      SharedParts,
      'config' | 'providerHTTP' | 'random' | 'stores' | 'session' | 'logger' | 'emailQueued' | 'limits' | 'consumedSignIns' | 'cookie' | 'secondFactor'
    >,
  ) => {
    const { config } = parts;
    const setup = createOAuthSetup(config, parts.providerHTTP);
    const flow = {
      ...setup,
      baseUrl: config.baseUrl,
      defaultReturnTo: config.defaultReturnTo,
      random: parts.random,
      stores: parts.stores,
      session: parts.session,
      appName: config.mail.appName,
      emailTemplates: config.emailTemplates,
      defaultLanguage: config.defaultLanguage,
      logger: parts.logger,
      onEmailQueued: parts.emailQueued,
      limits: parts.limits,
      consumedSignIns: parts.consumedSignIns,
    };
    // A provider sign-in into a 2FA account links only at its code step (oauth/flow.ts).
    parts.secondFactor.onCodeStep((challenge, ctx) => completePendingLink(flow, challenge, ctx));
    return {
      routes: [
        {
          prefix: '/api/auth',
          routes: createOAuthRoutes({ flow, cookie: parts.cookie, loginPageUrl: config.loginPageUrl, challenge: parts.secondFactor.challenge }),
        },
      ],
      sweep: async (now) => ({ pendingLinks: await parts.stores.accounts.deleteExpiredPendingLinks(now) }),
    };
  },
});
