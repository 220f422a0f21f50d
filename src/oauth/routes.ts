/**
 * @module GET /providers, GET /oauth/:provider and GET /callback/:provider: the list of sign-in
 * providers, the pending sign-in cookie and the redirects. Every decision is in flow.ts; failures
 * land on the login page with `error=<code>&provider=<id>&message=<plain text>` (SPEC §7),
 * successes on the return path.
 */
import type { Context } from 'hono';
import { Hono } from 'hono';
import { getCookie } from 'hono/cookie';
import { addAnswerCookie, clearAnswerCookie, jsonAnswer } from '../http/answer.js';
import { sha256Hex } from '../crypto/digest.js';
import { validationError } from '../errors.js';
import type { AppEnv } from '../http/env.js';
import { setSessionCookie, type SessionCookieSettings } from '../session/cookie.js';
import { issueChallenge, setChallengeCookie, type ChallengeCookieSettings } from '../mfa/challenge.js';
import type { RandomReader } from '../random.js';
import { completeSignIn, holdPendingLink, listSignInProviders, startSignIn, type OAuthFlowDeps } from './flow.js';
import { z } from 'zod';
import type { RouteDoc } from '../http/route-docs.js';

/** Sign-ins a browser may have in progress at once (tabs); starting another drops the oldest. */
const MAX_PENDING_SIGN_INS = 3;

/** The callback's parameters (RFC 6749 §4.1.2, and `iss` of RFC 9207): each may appear once. */
const CALLBACK_PARAMETERS = ['code', 'state', 'error', 'error_description', 'iss'] as const;

export interface OAuthRouteDeps {
  flow: OAuthFlowDeps;
  cookie: SessionCookieSettings;
  loginPageUrl: string;
  /** A 2FA account's provider sign-in ends on the login page's code step, with a challenge (mfa/challenge.ts). */
  challenge: { key: Uint8Array; random: RandomReader; cookie: ChallengeCookieSettings; onIssued?: (firstMethod: string) => void };
}

/** The login page with the error code, the provider's id and a plain-text message in its query. */
function loginPageWithError(loginPageUrl: string, error: string, providerId: string, message: string): string {
  const url = new URL(loginPageUrl, 'http://gatehouse.invalid');
  url.searchParams.set('error', error);
  // The page names the provider in its own sentence, looked up by id among the known ones.
  url.searchParams.set('provider', providerId);
  url.searchParams.set('message', message);
  return `${url.pathname}${url.search}${url.hash}`;
}

/** The login page at its code step (`?mfa=required`); the page reads nothing else from the query for it. */
function loginPageForSecondFactor(loginPageUrl: string): string {
  const url = new URL(loginPageUrl, 'http://gatehouse.invalid');
  url.searchParams.set('mfa', 'required');
  return `${url.pathname}${url.search}`;
}

export function createOAuthRoutes(deps: OAuthRouteDeps): Hono<AppEnv> {
  // `__Host-` with an https BASE_URL, like the session cookie: Secure, Path=/, no Domain, so a sibling
  // subdomain cannot plant a pending sign-in of its own.
  const pendingCookiePrefix = deps.cookie.secure ? '__Host-gatehouse_oauth' : 'gatehouse_oauth';
  // One cookie per sign-in, named after its state: two tabs signing in at once each keep their
  // own, and a callback reads and clears only the one its `state` names, so a stray or forged
  // callback cannot end another sign-in in progress. (The name carries a digest of the state,
  // not the state.)
  const pendingCookieName = (state: string): string => `${pendingCookiePrefix}_${sha256Hex(state).slice(0, 16)}`;
  // SameSite=Lax, not Strict: the callback is a top-level navigation from the provider's site,
  // and Strict would withhold the cookie exactly there.
  const cookieOptions = { httpOnly: true, secure: deps.cookie.secure, sameSite: 'Lax', path: '/' } as const;
  const query = (c: Context<AppEnv>, name: string): string | undefined => c.req.query(name);
  /** Which of `names` the query gives more than once (flow.ts refuses those). */
  const repeatedOf = (c: Context<AppEnv>, names: readonly string[]): string[] => names.filter((name) => (c.req.queries(name)?.length ?? 0) > 1);

  return new Hono<AppEnv>()
    .get('/providers', (c) => jsonAnswer(c, { providers: listSignInProviders(deps.flow) }))
    .get('/oauth/:provider', async (c) => {
      if (repeatedOf(c, ['return_to']).length > 0) throw validationError([{ path: 'return_to', message: 'is given more than once' }]);
      const started = await startSignIn(deps.flow, c.req.param('provider'), query(c, 'return_to'), c.get('requestContext'));
      // At most MAX_PENDING_SIGN_INS flows per browser: each cookie holds a return path of up to
      // 2 KB, and many would make every request's Cookie header too large to be served. Browsers
      // send older cookies first (RFC 6265 §5.4), so the oldest are dropped.
      const pending = Object.keys(getCookie(c)).filter((name) => name.startsWith(`${pendingCookiePrefix}_`));
      for (const stale of pending.slice(0, Math.max(0, pending.length - (MAX_PENDING_SIGN_INS - 1)))) clearAnswerCookie(c, stale, cookieOptions);
      addAnswerCookie(c, pendingCookieName(started.state), started.pendingSignIn, { ...cookieOptions, maxAge: started.maxAgeSeconds });
      return c.redirect(started.authorizationUrl, 302);
    })
    .get('/callback/:provider', async (c) => {
      const repeated = repeatedOf(c, CALLBACK_PARAMETERS);
      const state = repeated.includes('state') ? undefined : query(c, 'state');
      const cookieName = state === undefined ? null : pendingCookieName(state);
      const pendingSignIn = cookieName === null ? undefined : getCookie(c, cookieName);
      // Cleared whatever happens next: a pending sign-in is good for one callback only.
      if (cookieName !== null && pendingSignIn !== undefined) clearAnswerCookie(c, cookieName, cookieOptions);
      const ctx = c.get('requestContext');
      const outcome = await completeSignIn(
        deps.flow,
        {
          providerId: c.req.param('provider'),
          code: query(c, 'code'),
          state: query(c, 'state'),
          error: query(c, 'error'),
          errorDescription: query(c, 'error_description'),
          issuer: repeated.includes('iss') ? undefined : query(c, 'iss'),
          pendingSignIn,
          repeated,
        },
        ctx,
      );
      if (!outcome.ok) return c.redirect(loginPageWithError(deps.loginPageUrl, outcome.error, c.req.param('provider'), outcome.message), 302);
      if ('secondFactorFor' in outcome) {
        const { challenge, value } = issueChallenge(deps.challenge.key, deps.challenge.random, {
          userId: outcome.secondFactorFor.id,
          firstMethods: [outcome.firstMethod],
          returnTo: outcome.returnTo,
          now: ctx.now,
        });
        // A new link into a 2FA account waits for this challenge's code step.
        if (outcome.pendingLink !== null) await holdPendingLink(deps.flow, outcome.pendingLink, challenge);
        setChallengeCookie(c, deps.challenge.cookie, value, ctx.now);
        deps.challenge.onIssued?.('oauth');
        return c.redirect(loginPageForSecondFactor(deps.loginPageUrl), 302);
      }
      setSessionCookie(c, deps.cookie, outcome.session.token, outcome.session.expiresAt, ctx.now);
      return c.redirect(outcome.returnTo, 302);
    });
}

const providerParam = z.object({ provider: z.string().describe('github, or an id of OIDC_PROVIDERS') });

export const oauthRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/providers',
    tag: 'Sign-in providers',
    summary: 'The providers a person can sign in with now',
    answers: [
      {
        status: 200,
        description: 'GitHub first, then OIDC_PROVIDERS in order.',
        json: z.object({ providers: z.array(z.object({ id: z.string(), name: z.string() })) }),
      },
    ],
  },
  {
    method: 'get',
    path: '/oauth/:provider',
    tag: 'Sign-in providers',
    summary: 'Start signing in with a provider: a redirect to its authorization page',
    params: providerParam,
    query: z.object({ return_to: z.string().optional().describe('a path on this origin to land on afterwards') }),
    answers: [
      {
        status: 302,
        description: "To the provider's authorization page, with the signed pending sign-in cookie.",
        headers: { Location: "the provider's authorization URL" },
      },
    ],
    errors: ['not_found', 'provider_not_configured', 'provider_unavailable'],
  },
  {
    method: 'get',
    path: '/callback/:provider',
    tag: 'Sign-in providers',
    summary: "The provider's redirect back: signs in and redirects",
    params: providerParam,
    query: z.object({
      code: z.string().optional(),
      state: z.string().optional(),
      error: z.string().optional(),
      error_description: z.string().optional(),
      iss: z.string().optional().describe('OpenID Connect providers'),
    }),
    answers: [
      {
        status: 302,
        description:
          'To return_to with the session cookie; to the login page with ?error=invalid_state|oauth_error|oauth_failed on failure, or ?mfa=required with the challenge cookie.',
        headers: { Location: 'where the browser goes next' },
      },
    ],
    errors: ['not_found', 'provider_not_configured', 'provider_unavailable'],
  },
];
