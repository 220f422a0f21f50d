/** @module Sessions as a capability: read the session (and its fast path for `gatehouse serve`), sign out; the expired sessions' sweep. */
import { defineCapability } from '../capability.js';
import { fastApiHeaders } from '../http/fast-answer.js';
import type { SharedParts } from '../parts.js';
import { sessionFastRoute } from './fast-path.js';
import { createSessionRoutes, sessionRouteDocs } from './routes.js';

export const sessions = defineCapability({
  name: 'sessions',
  routeDocs: [{ prefix: '/api/auth', docs: sessionRouteDocs }],
  build: (parts: Pick<SharedParts, 'session' | 'cookie' | 'stores' | 'config' | 'clock' | 'metrics' | 'logger'>) => ({
    routes: [{ prefix: '/api/auth', routes: createSessionRoutes({ session: parts.session, cookie: parts.cookie, audit: parts.stores.audit }) }],
    sweep: async (now) => ({ sessions: await parts.stores.sessions.deleteExpiredSessions(now) }),
    fastRoute: sessionFastRoute({
      session: parts.session,
      cookie: parts.cookie,
      clock: parts.clock,
      apiHeaders: fastApiHeaders(parts.config),
      recorder: parts.metrics.recorder,
      logger: parts.logger,
      trustProxyHops: parts.config.trustProxyHops,
    }),
  }),
});
