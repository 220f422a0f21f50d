/** @module Password sign-in as a capability: register, login, logout. */
import { defineCapability } from '../capability.js';
import { verificationDeps } from '../email-verification/capability.js';
import { deviceCookieSettings } from '../limits/device-cookie.js';
import { createDeviceTokenKey } from '../limits/device-token.js';
import { fastApiHeaders } from '../http/fast-answer.js';
import type { SharedParts } from '../parts.js';
import { loginFastRoute } from './fast-path.js';
import { createPasswordRoutes, passwordRouteDocs } from './routes.js';

export const passwordSignIn = defineCapability({
  name: 'password-sign-in',
  routeDocs: [{ prefix: '/api/auth', docs: passwordRouteDocs }],
  build: (
    parts: Pick<
      SharedParts,
      | 'config'
      | 'jwtSecret'
      | 'stores'
      | 'hasher'
      | 'breachCheck'
      | 'session'
      | 'cookie'
      | 'limits'
      | 'loginLock'
      | 'random'
      | 'notices'
      | 'background'
      | 'emailQueued'
      | 'adminStore'
      | 'devMode'
      | 'secondFactor'
      | 'clock'
      | 'metrics'
      | 'logger'
    >,
  ) => ({
    routes: [
      {
        prefix: '/api/auth',
        routes: createPasswordRoutes({
          flow: {
            stores: parts.stores,
            hasher: parts.hasher,
            breachCheck: parts.breachCheck,
            session: parts.session,
            // Registration mails the verification link.
            verification: verificationDeps(parts),
            limits: parts.limits,
            loginLock: parts.loginLock,
            device: { key: createDeviceTokenKey(parts.jwtSecret), random: parts.random },
            notices: parts.notices,
            background: parts.background,
          },
          cookie: parts.cookie,
          deviceCookie: deviceCookieSettings(parts.config.httpsBaseUrl),
          devMode: parts.devMode,
          challenge: parts.secondFactor.challenge,
        }),
      },
    ],
    fastRoute: loginFastRoute({
      limits: parts.limits,
      audit: parts.stores.audit,
      clock: parts.clock,
      trustProxyHops: parts.config.trustProxyHops,
      apiHeaders: fastApiHeaders(parts.config),
      recorder: parts.metrics.recorder,
      logger: parts.logger,
    }),
  }),
});
