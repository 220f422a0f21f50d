/**
 * @module Organizations as a capability: the /api/orgs routes, and the sweep of expired
 * invitations. The pages (/account's list, /organizations/:id, /accept-invitation) are the pages
 * capability's; the `organizations` claim is the OpenID Connect provider's; the operators' routes
 * and commands are admin-routes.ts and cli.ts here.
 */
import { defineCapability } from '../capability.js';
import { reauthDepsOf } from '../credentials/reauthenticate.js';
import type { SharedParts } from '../parts.js';
import { createOrganizationRoutes, organizationRouteDocs } from './routes.js';

export const organizations = defineCapability({
  name: 'organizations',
  routeDocs: [{ prefix: '/api/orgs', docs: organizationRouteDocs }],
  build: (
    parts: Pick<
      SharedParts,
      'config' | 'stores' | 'hasher' | 'loginLock' | 'limits' | 'random' | 'notices' | 'background' | 'emailQueued' | 'session' | 'cookie' | 'devMode'
    >,
  ) => {
    const { config } = parts;
    const flow = {
      ...reauthDepsOf(parts),
      roles: config.organizationRoles,
      random: parts.random,
      baseUrl: config.baseUrl,
      appName: config.mail.appName,
      defaultLanguage: config.defaultLanguage,
      emailTemplates: config.emailTemplates,
      onEmailQueued: parts.emailQueued,
    };
    return {
      routes: [{ prefix: '/api/orgs', routes: createOrganizationRoutes({ flow, session: parts.session, cookie: parts.cookie, devMode: parts.devMode }) }],
      sweep: async (now) => ({ organizationInvitations: await parts.stores.organizations.deleteExpiredInvitations(now) }),
    };
  },
});
