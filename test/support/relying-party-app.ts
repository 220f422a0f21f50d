/**
 * A tiny app on another origin that signs people in through Gatehouse with `openid-client` 6, as
 * a real relying party would: a server-side authorization code flow with PKCE (S256) and state
 * kept in memory, the ID token's claims and userinfo shown after the callback, and a "Sign out"
 * link to the end-session endpoint. The browser tests drive it in Chromium, so what Gatehouse's
 * pages do across origins (cookies, CSP form-action, redirect chains) is what a browser does.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import { escapeHtml } from '../../src/escape-html.js';

export interface RelyingPartyApp {
  /** http://127.0.0.1:<port>: a different origin from Gatehouse's localhost. */
  readonly url: string;
  readonly redirectUri: string;
  readonly postLogoutRedirectUri: string;
  /** Discovers Gatehouse as this registered client; the pages answer 503 until then. */
  configure(issuer: string, clientId: string, clientSecret: string | undefined): Promise<void>;
  /** Everything that went wrong on the app's side (a refused code, a failed discovery). */
  readonly failures: string[];
  close(): Promise<void>;
}

const page = (title: string, body: string): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;

/** Starts the app on 127.0.0.1 at a port the kernel picks. */
export async function startRelyingPartyApp(options: { scope?: string } = {}): Promise<RelyingPartyApp> {
  let config: oidc.Configuration | undefined;
  // state → PKCE verifier of each sign-in begun here; one use each.
  const pending = new Map<string, string>();
  const failures: string[] = [];
  let base = '';

  async function signInLink(): Promise<string> {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    pending.set(state, verifier);
    const url = oidc.buildAuthorizationUrl(config!, {
      redirect_uri: `${base}/callback`,
      scope: options.scope ?? 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    return page('Example app', `<a id="sign-in" href="${escapeHtml(url.href)}">Sign in</a>`);
  }

  async function callback(url: URL): Promise<[number, string]> {
    const error = url.searchParams.get('error');
    if (error !== null) return [200, page('Not signed in', `<p>error: <span id="error">${escapeHtml(error)}</span></p>`)];
    const state = url.searchParams.get('state') ?? '';
    const verifier = pending.get(state);
    pending.delete(state);
    if (verifier === undefined) return [400, page('Unknown sign-in', '<p>no sign-in was begun with this state</p>')];
    const tokens = await oidc.authorizationCodeGrant(config!, url, { pkceCodeVerifier: verifier, expectedState: state });
    const claims = tokens.claims()!;
    const userinfo = await oidc.fetchUserInfo(config!, tokens.access_token, claims.sub);
    const signOut = oidc.buildEndSessionUrl(config!, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: `${base}/signed-out`,
      state: `bye-${state.slice(0, 8)}`,
    });
    const amr = Array.isArray(claims.amr) ? claims.amr.join(' ') : '';
    return [
      200,
      page(
        'Signed in',
        `<dl><dt>sub</dt><dd id="sub">${escapeHtml(claims.sub)}</dd><dt>amr</dt><dd id="amr">${escapeHtml(amr)}</dd>` +
          `<dt>email</dt><dd id="email">${escapeHtml(String(userinfo.email ?? ''))}</dd></dl>` +
          `<a id="sign-out" href="${escapeHtml(signOut.href)}">Sign out</a>`,
      ),
    ];
  }

  async function answer(request: http.IncomingMessage): Promise<[number, string]> {
    const url = new URL(request.url ?? '/', base);
    if (config === undefined) return [503, page('Not configured', '')];
    if (url.pathname === '/') return [200, await signInLink()];
    if (url.pathname === '/callback') return callback(url);
    if (url.pathname === '/signed-out') {
      return [200, page('Signed out', `<p>signed out; state: <span id="state">${escapeHtml(url.searchParams.get('state') ?? '')}</span></p>`)];
    }
    return [404, page('Not found', '')];
  }

  const server = http.createServer((request, response) => {
    answer(request)
      .catch((error: unknown): [number, string] => {
        const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        failures.push(text);
        return [500, page('App error', `<p id="failure">${escapeHtml(text)}</p>`)];
      })
      .then(([status, body]) => response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body))
      .catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    redirectUri: `${base}/callback`,
    postLogoutRedirectUri: `${base}/signed-out`,
    failures,
    async configure(issuer, clientId, clientSecret) {
      // Gatehouse is plain http on loopback here: the one switch that allows it.
      config = await oidc.discovery(new URL(issuer), clientId, clientSecret, undefined, { execute: [oidc.allowInsecureRequests] });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
