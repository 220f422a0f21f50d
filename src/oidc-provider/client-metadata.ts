/**
 * @module A registered client (clients.ts) as the engine's client metadata. A confidential
 * client's `client_secret` here is the SHA-256 of its secret: the engine compares what a client
 * presents through `compareClientSecret`, which provider.ts replaces with a comparison of hashes,
 * and nothing else uses the secret (no HS256, no client_secret_jwt, no symmetric encryption).
 */
import type { ClientMetadata } from 'oidc-provider';
import { isLoopbackRedirect } from './clients.js';
import type { GrantName, OidcClient } from './store.js';

/** The engine's name of each grant. */
const GRANT_TYPE: Readonly<Record<GrantName, string>> = {
  authorization_code: 'authorization_code',
  refresh_token: 'refresh_token',
  client_credentials: 'client_credentials',
  device_code: 'urn:ietf:params:oauth:grant-type:device_code',
};

/** The extra metadata property that marks a first-party client (it skips the consent page). */
export const FIRST_PARTY = 'gatehouse_first_party';

/**
 * A native app (RFC 8252) redirects to a private-use scheme or a loopback address; the engine
 * then lets a loopback URI's port vary at request time, as a desktop app's local server needs.
 */
function applicationType(client: OidcClient): 'native' | 'web' {
  const native = client.redirectUris.some((uri) => {
    const url = new URL(uri);
    return isLoopbackRedirect(url) || (url.protocol !== 'http:' && url.protocol !== 'https:');
  });
  return native ? 'native' : 'web';
}

export function clientMetadata(client: OidcClient, secretHash: string | null): ClientMetadata {
  const grantTypes = client.grantTypes.map((grant) => GRANT_TYPE[grant]);
  return {
    client_id: client.clientId,
    client_name: client.name,
    ...(secretHash === null ? { token_endpoint_auth_method: 'none' } : { client_secret: secretHash, token_endpoint_auth_method: 'client_secret_basic' }),
    application_type: applicationType(client),
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    grant_types: grantTypes,
    response_types: client.grantTypes.includes('authorization_code') ? ['code'] : [],
    scope: client.scopes.join(' '),
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    ...(client.backchannelLogoutUri === null ? {} : { backchannel_logout_uri: client.backchannelLogoutUri, backchannel_logout_session_required: false }),
    [FIRST_PARTY]: client.firstParty,
  };
}

/**
 * The CSP `form-action` sources for a page whose form's redirect chain ends at one of `uris` (the
 * browser checks each hop): an https or http origin as it is, a loopback address on any port (a
 * native app's port is chosen at request time), a private-use scheme by its scheme.
 */
export function formActionSources(uris: readonly string[]): string[] {
  const sources = new Set<string>();
  for (const uri of uris) {
    if (!URL.canParse(uri)) continue;
    const url = new URL(uri);
    if (isLoopbackRedirect(url)) sources.add(`http://${url.hostname}:*`);
    else if (url.protocol === 'https:' || url.protocol === 'http:') sources.add(url.origin);
    else sources.add(url.protocol);
  }
  return [...sources];
}
