/**
 * @module A first-party app (an app of the team itself, registered `firstParty`) gets a refresh
 * token for `offline_access` without asking for `prompt=consent`. The engine follows OpenID Connect
 * to the letter and drops `offline_access` from an authorization request without that prompt; for
 * a first-party app this middleware adds it, and the consent step then completes without a page
 * (interaction-routes.ts): the team gave its consent when it registered the app.
 */
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { OidcClientStore } from './store.js';

export function firstPartyOfflineAccess(clients: OidcClientStore) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> => {
    if (ctx.path === '/oauth2/authorize' && ctx.method === 'GET') {
      const params = new URLSearchParams(ctx.querystring);
      const clientId = params.get('client_id');
      const prompts = (params.get('prompt') ?? '').split(' ').filter((prompt) => prompt !== '');
      const wantsOffline = (params.get('scope') ?? '').split(' ').includes('offline_access');
      // prompt=none cannot be combined with consent: the engine drops offline_access then, as it should.
      if (clientId !== null && wantsOffline && !prompts.includes('consent') && !prompts.includes('none')) {
        const found = await clients.findClient(clientId);
        if (found?.client.firstParty === true) {
          params.set('prompt', [...prompts, 'consent'].join(' '));
          ctx.querystring = params.toString();
        }
      }
    }
    await next();
  };
}
