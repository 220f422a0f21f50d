/**
 * @module Who the passkeys belong to (the WebAuthn "relying party"), from the configuration: its
 * id is BASE_URL's host name, and a ceremony is accepted from BASE_URL's origin and the
 * TRUSTED_ORIGINS. Browsers offer WebAuthn only in a secure context (https, or http://localhost)
 * and never for an IP address: `passkeyAddressProblem` says so at start (banner.ts).
 */
import { isIP } from 'node:net';

export interface RelyingParty {
  /** BASE_URL's host name, without port. */
  id: string;
  /** Shown by the authenticator beside the account (APP_NAME). */
  name: string;
  /** BASE_URL's origin first, then TRUSTED_ORIGINS. */
  origins: readonly string[];
}

export function relyingPartyOf(config: { baseUrl: string; trustedOrigins: readonly string[]; appName: string }): RelyingParty {
  const base = new URL(config.baseUrl);
  return {
    id: base.hostname,
    name: config.appName,
    origins: Object.freeze([base.origin, ...config.trustedOrigins.filter((origin) => origin !== base.origin)]),
  };
}

const isLocalhost = (host: string): boolean => host === 'localhost' || host.endsWith('.localhost');

/** Why browsers will refuse passkeys at this BASE_URL; null when they will offer them. */
export function passkeyAddressProblem(baseUrl: string): string | null {
  const url = new URL(baseUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0)
    return `BASE_URL ${url.origin} is an IP address, and browsers accept passkeys only for a domain name (use http://localhost in development)`;
  if (url.protocol !== 'https:' && !isLocalhost(host)) {
    return `BASE_URL ${url.origin} is plain http, and browsers offer passkeys only over https (or on http://localhost)`;
  }
  return null;
}
