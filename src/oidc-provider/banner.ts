/** @module The start banner's line about the OpenID Connect provider: its issuer and how many clients it serves. */
import type { BannerLine } from '../banner.js';
import type { Config } from '../config.js';

export function oidcProviderLine(config: Pick<Config, 'baseUrl'>, enabled: boolean, clientCount: number): BannerLine {
  const details = { capability: 'oidcProvider', issuer: config.baseUrl, clients: clientCount };
  if (!enabled) {
    return {
      level: clientCount > 0 ? 'warn' : 'info',
      message: 'OpenID Connect provider is off: set ENCRYPTION_KEY_BASE64 to keep its signing keys sealed',
      details: { ...details, state: 'off' },
    };
  }
  const clients =
    clientCount === 0 ? 'no client registered (gatehouse clients create --name N --redirect-uri U)' : `${clientCount} client${clientCount === 1 ? '' : 's'}`;
  return { level: 'info', message: `OpenID Connect provider: issuer ${config.baseUrl}, ${clients}`, details };
}
