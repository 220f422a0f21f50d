/** @module The operators' admin API (mounted only while ADMIN_API_KEY is set) and the `users` and `audit` commands. */
import { defineCapability } from '../capability.js';
import type { SharedParts } from '../parts.js';
import { ADMIN_COMMANDS } from './commands.js';
import { adminRouteDocs, createAdminRoutes } from './routes.js';

export const admin = defineCapability({
  name: 'admin',
  // Documented always (the document says it needs the key); mounted only with ADMIN_API_KEY.
  routeDocs: [{ prefix: '/api/admin', docs: adminRouteDocs }],
  commands: ADMIN_COMMANDS,
  build: (parts: Pick<SharedParts, 'config' | 'limits' | 'stores' | 'adminStore' | 'loginLock'>) => {
    const apiKey = parts.config.adminApiKey;
    // Unset: not mounted, so /api/admin/* is the plain 404.
    if (apiKey === null) return { routes: [] };
    const flow = { stores: parts.stores, admin: parts.adminStore, loginLock: parts.loginLock };
    return { routes: [{ prefix: '/api/admin', routes: createAdminRoutes({ apiKey, limits: parts.limits, flow }) }] };
  },
});
