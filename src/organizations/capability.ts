/**
 * @module Organizations as a capability: the /api/orgs routes, and the sweep of expired
 * invitations. The pages (/account's list, /organizations/:id, /accept-invitation) are the pages
 * capability's; the `organizations` claim is the OpenID Connect provider's; the operators' routes
 * and commands are admin-routes.ts and cli.ts here.
 */
import { adminKeyCheck } from '../admin/routes.js';
import { defineCapability } from '../capability.js';
import { reauthDepsOf } from '../credentials/reauthenticate.js';
import type { SharedParts } from '../parts.js';
import { createOrganizationAdminRoutes, organizationAdminRouteDocs } from './admin-routes.js';
import { ORGANIZATION_COMMANDS } from './cli.js';
import { createOrganizationRoutes, organizationRouteDocs } from './routes.js';

export const organizations = defineCapability({
  name: 'organizations',
  routeDocs: [
    { prefix: '/api', docs: organizationRouteDocs },
    // Documented always (the document says it needs the key); mounted only with ADMIN_API_KEY.
    { prefix: '/api/admin', docs: organizationAdminRouteDocs },
  ],
  commands: ORGANIZATION_COMMANDS,
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
    const apiKey = config.adminApiKey;
    // Unset: not mounted, so /api/admin/orgs is the plain 404 as the rest of /api/admin.
    const adminRoutes =
      apiKey === null
        ? []
        : [
            {
              prefix: '/api/admin',
              routes: createOrganizationAdminRoutes({ flow: { stores: parts.stores }, requireAdminKey: adminKeyCheck({ apiKey, limits: parts.limits }) }),
            },
          ];
    return {
      routes: [
        { prefix: '/api', routes: createOrganizationRoutes({ flow, session: parts.session, cookie: parts.cookie, devMode: parts.devMode }) },
        ...adminRoutes,
      ],
      sweep: async (now) => ({ organizationInvitations: await parts.stores.organizations.deleteExpiredInvitations(now) }),
    };
  },
});
