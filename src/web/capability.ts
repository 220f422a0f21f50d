/** @module The pages and their static assets as a capability (docs/pages.md). */
import { defineCapability } from '../capability.js';
import { emailSignInDeps } from '../email-sign-in/capability.js';
import { describeEmailSignInLink } from '../email-sign-in/flow.js';
import { verificationDeps } from '../email-verification/capability.js';
import { describeVerificationLink } from '../email-verification/flow.js';
import { describeInvitation, organizationForMember } from '../organizations/pages-data.js';
import type { SharedParts } from '../parts.js';
import { createWebRoutes, webRouteDocs } from './routes.js';

export const pages = defineCapability({
  name: 'pages',
  routeDocs: [{ prefix: '', docs: webRouteDocs }],
  build: (
    parts: Pick<
      SharedParts,
      'config' | 'jwtSecret' | 'session' | 'cookie' | 'stores' | 'random' | 'limits' | 'loginLock' | 'notices' | 'background' | 'emailQueued' | 'adminStore'
    >,
  ) => {
    // The verification and sign-in pages read their link (without spending it) to name the account.
    const verification = verificationDeps(parts);
    const signIn = emailSignInDeps(parts);
    return {
      routes: [
        {
          prefix: '/',
          routes: createWebRoutes({
            config: parts.config,
            session: parts.session,
            cookie: parts.cookie,
            describeVerificationLink: (token, now) => describeVerificationLink(verification, token, now),
            describeEmailSignInLink: (token, now) => describeEmailSignInLink(signIn, token, now),
            users: parts.stores.users,
            organizations: {
              roles: [...parts.config.organizationRoles.keys()],
              forMember: (organizationId, userId) => organizationForMember(parts.stores, organizationId, userId),
              describeInvitation: (token, now) => describeInvitation(parts.stores, token, now),
            },
          }),
        },
      ],
    };
  },
});
