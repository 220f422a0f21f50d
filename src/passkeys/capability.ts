/** @module Passkeys as a capability: registration, management and sign-in. */
import { defineCapability } from '../capability.js';
import { reauthDepsOf } from '../credentials/reauthenticate.js';
import type { SharedParts } from '../parts.js';
import { createPasskeyChallengeKey, passkeyCookieSettings } from './challenge.js';
import { relyingPartyOf } from './relying-party.js';
import { createPasskeyRoutes, passkeyRouteDocs } from './routes.js';

export const passkeys = defineCapability({
  name: 'passkeys',
  routeDocs: [{ prefix: '/api/auth', docs: passkeyRouteDocs }],
  build: (
    parts: Pick<
      SharedParts,
      | 'config'
      | 'jwtSecret'
      | 'stores'
      | 'hasher'
      | 'loginLock'
      | 'notices'
      | 'background'
      | 'random'
      | 'limits'
      | 'session'
      | 'cookie'
      | 'consumedSignIns'
      | 'secondFactor'
    >,
  ) => {
    const { config } = parts;
    const flow = {
      ...reauthDepsOf(parts),
      random: parts.random,
      session: parts.session,
      relyingParty: relyingPartyOf({ baseUrl: config.baseUrl, trustedOrigins: config.trustedOrigins, appName: config.mail.appName }),
      challengeKey: createPasskeyChallengeKey(parts.jwtSecret),
      spentChallenges: parts.consumedSignIns,
    };
    return {
      routes: [
        {
          prefix: '/api/auth',
          routes: createPasskeyRoutes({
            flow,
            session: parts.session,
            cookie: parts.cookie,
            passkeyCookie: passkeyCookieSettings(config.httpsBaseUrl),
            challenge: parts.secondFactor.challenge,
          }),
        },
      ],
    };
  },
});
