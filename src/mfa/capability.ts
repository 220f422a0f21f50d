/** @module Two-factor sign-in as a capability: TOTP setup, enable, disable, recovery codes, and the code step. */
import { defineCapability } from '../capability.js';
import { reauthDepsOf } from '../credentials/reauthenticate.js';
import { createEnvelope } from '../crypto/envelope.js';
import type { SharedParts } from '../parts.js';
import { createMfaRoutes, mfaRouteDocs } from './routes.js';

export const twoFactor = defineCapability({
  name: 'two-factor',
  routeDocs: [{ prefix: '/api/auth', docs: mfaRouteDocs }],
  build: (
    parts: Pick<
      SharedParts,
      'config' | 'stores' | 'hasher' | 'loginLock' | 'notices' | 'background' | 'random' | 'limits' | 'session' | 'cookie' | 'consumedSignIns' | 'secondFactor'
    >,
  ) => {
    const { config } = parts;
    // Two-factor secrets are sealed with ENCRYPTION_KEY_BASE64, or outside production with the key
    // generated into the data folder; with neither, setup answers 503 naming the variable.
    const keys = config.encryptionKeys.length > 0 ? config.encryptionKeys : config.generatedEncryptionKey !== null ? [config.generatedEncryptionKey] : [];
    const flow = {
      ...reauthDepsOf(parts),
      random: parts.random,
      session: parts.session,
      appName: config.mail.appName,
      challengeKey: parts.secondFactor.challenge.key,
      spentChallenges: parts.consumedSignIns,
      envelope: keys.length > 0 ? createEnvelope(keys) : null,
      // What other capabilities left waiting for the code step (a provider link: oauth/capability.ts).
      afterSecondFactor: parts.secondFactor.runCodeStepHooks,
    };
    return {
      routes: [
        {
          prefix: '/api/auth',
          routes: createMfaRoutes({ flow, session: parts.session, cookie: parts.cookie, challengeCookie: parts.secondFactor.challenge.cookie }),
        },
      ],
    };
  },
});
