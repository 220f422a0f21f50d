/** @module Sessions as a capability: read the session, sign out; the expired sessions' sweep. */
import { defineCapability } from '../capability.js';
import type { SharedParts } from '../parts.js';
import { createSessionRoutes, sessionRouteDocs } from './routes.js';

export const sessions = defineCapability({
  name: 'sessions',
  routeDocs: [{ prefix: '/api/auth', docs: sessionRouteDocs }],
  build: (parts: Pick<SharedParts, 'session' | 'cookie' | 'stores'>) => ({
    routes: [{ prefix: '/api/auth', routes: createSessionRoutes({ session: parts.session, cookie: parts.cookie, audit: parts.stores.audit }) }],
    sweep: async (now) => ({ sessions: await parts.stores.sessions.deleteExpiredSessions(now) }),
  }),
});
