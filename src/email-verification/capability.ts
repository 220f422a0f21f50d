/** @module Email verification as a capability: verify-email, decline, resend; its tokens' sweep. */
import { defineCapability } from '../capability.js';
import type { SharedParts } from '../parts.js';
import type { VerificationDeps } from './flow.js';
import { createVerificationRoutes, verificationRouteDocs } from './routes.js';

/** What verification needs, also for registration (password sign-in) and the verification page (web). */
export function verificationDeps(parts: Pick<SharedParts, 'stores' | 'random' | 'config' | 'emailQueued' | 'limits' | 'adminStore'>): VerificationDeps {
  return {
    stores: parts.stores,
    random: parts.random,
    baseUrl: parts.config.baseUrl,
    appName: parts.config.mail.appName,
    defaultLanguage: parts.config.defaultLanguage,
    emailTemplates: parts.config.emailTemplates,
    onEmailQueued: parts.emailQueued,
    limits: parts.limits,
    // The page shows when and from where the account was created: its `user_created` audit row.
    registrationOf: async (userId) => {
      const [created] = await parts.adminStore.searchAuditEvents({ userId, type: 'user_created', since: null, until: null, limit: 1, before: null });
      return created === undefined ? null : { ip: created.ip, userAgent: created.userAgent };
    },
  };
}

export const emailVerification = defineCapability({
  name: 'email-verification',
  routeDocs: [{ prefix: '/api/auth', docs: verificationRouteDocs }],
  build: (parts: Pick<SharedParts, 'stores' | 'random' | 'config' | 'emailQueued' | 'limits' | 'adminStore' | 'session' | 'cookie' | 'devMode'>) => ({
    routes: [
      {
        prefix: '/api/auth',
        routes: createVerificationRoutes({ flow: verificationDeps(parts), session: parts.session, cookie: parts.cookie, devMode: parts.devMode }),
      },
    ],
    // A used token is deleted when used; an expired one here.
    sweep: async (now) => ({ verificationTokens: await parts.stores.verificationTokens.deleteExpiredVerificationTokens(now) }),
  }),
});
