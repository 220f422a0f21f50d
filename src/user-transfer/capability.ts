/**
 * @module User import and export as a capability: the admin API's import and export (mounted
 * only with ADMIN_API_KEY, behind the admin API's key check, before the admin capability's
 * routes), and a person's own data export. The `gatehouse users import|export` commands are
 * reached through the admin capability's `users` command (src/admin/commands.ts).
 */
import { defineCapability } from '../capability.js';
import { createTransferStore } from '../db/user-transfer-store.js';
import { adminKeyCheck } from '../admin/routes.js';
import type { SharedParts } from '../parts.js';
import { accountExportRouteDocs, adminTransferRouteDocs, createAccountExportRoutes, createAdminTransferRoutes } from './routes.js';

export const userTransfer = defineCapability({
  name: 'user-transfer',
  routeDocs: [
    { prefix: '/api/auth', docs: accountExportRouteDocs },
    { prefix: '/api/admin', docs: adminTransferRouteDocs },
  ],
  build: (parts: Pick<SharedParts, 'config' | 'database' | 'stores' | 'limits' | 'session' | 'cookie'>) => {
    const store = createTransferStore(parts.database.kysely);
    const apiKey = parts.config.adminApiKey;
    const accountRoutes = {
      prefix: '/api/auth',
      routes: createAccountExportRoutes({
        flow: { store, organizations: parts.stores.organizations, audit: parts.stores.audit, limits: parts.limits },
        session: parts.session,
        cookie: parts.cookie,
      }),
    };
    if (apiKey === null) return { routes: [accountRoutes] };
    const requireAdminKey = adminKeyCheck({ apiKey, limits: parts.limits });
    const adminRoutes = createAdminTransferRoutes({ flow: { store, audit: parts.stores.audit }, requireAdminKey });
    return { routes: [accountRoutes, { prefix: '/api/admin', routes: adminRoutes }] };
  },
});
