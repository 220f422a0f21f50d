/**
 * @module Where the OpenID Connect engine sends a browser that must sign in or consent:
 * `/consent/:uid`. Signing in is Gatehouse's own `/login` (every method, the code step included),
 * which returns here; the engine is then told who signed in, how (`amr`) and when (`auth_time`).
 * Consent is a page naming the app and what it asks for, with Allow and Deny. The engine's
 * interaction cookie binds each step to the browser that began it, so a link to someone else's
 * sign-in request does nothing for whoever follows it.
 *
 * These steps work on Node's request objects (the engine reads its cookies there): served by the
 * Node server; through the library face's `fetch` they answer 404.
 */
import { Hono, type Context } from 'hono';
import { getCookie } from 'hono/cookie';
import type Provider from 'oidc-provider';
import type { InteractionResults } from 'oidc-provider';
import { sha256Hex } from '../crypto/digest.js';
import { readSignedRecord, signRecord } from '../crypto/mac.js';
import { addAnswerCookie } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { securityHeaders } from '../http/security-headers.js';
import { validateSessionToken, type SessionDeps, type ValidSession } from '../session/flow.js';
import { readSessionCookie, type SessionCookieSettings } from '../session/cookie.js';
import type { Stores } from '../stores.js';
import { html, renderLayout, type PageContext } from '../web/html.js';
import { pageContextOf, type PageContextSettings } from '../web/page-context.js';
import { isSecondFactorRequired } from '../credentials/second-factor.js';
import { amrOf } from './amr.js';
import { FIRST_PARTY, formActionSources } from './client-metadata.js';
import { INTERACTION_PATH, MFA_REASON } from './provider.js';

export interface InteractionDeps {
  provider: () => Promise<Provider>;
  session: SessionDeps;
  cookie: SessionCookieSettings;
  stores: Pick<Stores, 'audit' | 'totp' | 'passkeys'>;
  page: PageContextSettings;
  httpsBaseUrl: boolean;
  /** Signs the marker of a request for a fresh sign-in (derived from JWT_SECRET). */
  markerKey: Uint8Array;
}

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

/** The scopes the consent page names, in this order, each in the page's language. */
function scopeWords(t: PageContext['t']): ReadonlyArray<readonly [string, string]> {
  return [
    ['openid', t('consent.scope.openid')],
    ['email', t('consent.scope.email')],
    ['organizations', t('consent.scope.organizations')],
    ['offline_access', t('consent.scope.offline_access')],
  ];
}

function consentPolicy(redirectOrigins: readonly string[]): string {
  // A form's redirect chain ends at the app: the browser checks form-action on each hop.
  return `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self' ${redirectOrigins.join(' ')}; base-uri 'none'; frame-ancestors 'none'`;
}

/** How long a request for a fresh sign-in waits for it (the engine's interactions last an hour). */
const REAUTH_MARKER_MS = 60 * 60 * 1000;
const REAUTH_COOKIE = 'gatehouse_op_reauth';
/** The consent form sends one short field. */
const MAX_FORM_BYTES = 1024;

/** `prompt=login` and an exceeded `max_age` ask for a sign-in made for this request. */
function needsFreshSignIn(interaction: Interaction): boolean {
  const reasons = interaction.prompt.reasons;
  return reasons.includes('login_prompt') || reasons.includes('max_age');
}

/**
 * A fresh sign-in is told by its session, not by clocks: the first visit remembers, in a signed
 * cookie bound to the interaction, which Gatehouse session (if any) the browser had; the sign-in
 * counts once the browser comes back with another one. Without the signed marker it never counts.
 */
function signedInAfterRequest(c: Context<AppEnv>, deps: InteractionDeps, uid: string, valid: ValidSession): boolean {
  const marker = readSignedRecord(deps.markerKey, getCookie(c, REAUTH_COOKIE), c.get('requestContext').now);
  return marker !== null && marker.u === uid && marker.s !== sha256Hex(valid.session.id);
}

function rememberSessionBeforeSignIn(c: Context<AppEnv>, deps: InteractionDeps, uid: string, valid: ValidSession | null): void {
  const now = c.get('requestContext').now;
  const marker = signRecord(deps.markerKey, { e: now.getTime() + REAUTH_MARKER_MS, u: uid, s: valid === null ? '' : sha256Hex(valid.session.id) });
  addAnswerCookie(c, REAUTH_COOKIE, marker, {
    path: `${INTERACTION_PATH}/${uid}`,
    httpOnly: true,
    secure: deps.httpsBaseUrl,
    sameSite: 'Lax',
    maxAge: REAUTH_MARKER_MS / 1000,
  });
}

type Found = { provider: Provider; interaction: Interaction };

/** The engine's interaction for this browser; null when it expired, belongs to another browser, or there are no Node objects. */
async function interactionOf(deps: InteractionDeps, c: Context<AppEnv>): Promise<Found | null> {
  const node = c.env.node;
  if (node === undefined) return null;
  const provider = await deps.provider();
  try {
    const interaction = await provider.interactionDetails(node.incoming, node.outgoing);
    return interaction.uid === c.req.param('uid') ? { provider, interaction } : null;
  } catch {
    return null;
  }
}

async function readValid(deps: InteractionDeps, c: Context<AppEnv>): Promise<ValidSession | null> {
  const token = readSessionCookie(c, deps.cookie);
  return token ? validateSessionToken(deps.session, token, c.get('requestContext').now) : null;
}

/** Tells the engine the step's result and sends the browser on (back to the authorization endpoint). */
async function finish(c: Context<AppEnv>, provider: Provider, result: InteractionResults): Promise<Response> {
  const { incoming, outgoing } = c.env.node ?? {};
  if (incoming === undefined || outgoing === undefined) return c.notFound();
  const to = await provider.interactionResult(incoming, outgoing, result, { mergeWithLastSubmission: true });
  return c.redirect(to, 303);
}

function withPageHeaders(c: Context<AppEnv>, deps: InteractionDeps, redirectOrigins: readonly string[]): void {
  for (const [name, value] of securityHeaders({ contentSecurityPolicy: consentPolicy(redirectOrigins), httpsBaseUrl: deps.httpsBaseUrl }))
    c.header(name, value);
  // The consent forms post here: with the origin named (layout's referrerPolicy), as the cross-site rule needs.
  c.header('Referrer-Policy', 'same-origin');
}

/** A step that cannot go on here (expired, another browser, another account): back to the app. */
function expired(c: Context<AppEnv>, deps: InteractionDeps): Response | Promise<Response> {
  if (c.env.node === undefined) return c.notFound();
  const ctx = pageContextOf(c, deps.page);
  withPageHeaders(c, deps, []);
  return c.html(
    renderLayout({ title: ctx.t('consent.title'), page: 'consent', ctx, message: { kind: 'error', text: ctx.t('consent.expired') }, body: html`` }),
    400,
  );
}

async function consentPage(c: Context<AppEnv>, deps: InteractionDeps, found: Found, valid: ValidSession): Promise<Response> {
  const { provider, interaction } = found;
  const client = await provider.Client.find(String(interaction.params.client_id));
  if (client === undefined) return expired(c, deps);
  const ctx = pageContextOf(c, deps.page);
  const requested = String(interaction.params.scope ?? '').split(' ');
  withPageHeaders(c, deps, formActionSources(client.redirectUris ?? []));
  const action = `${INTERACTION_PATH}/${interaction.uid}`;
  return c.html(
    renderLayout({
      title: ctx.t('consent.title'),
      page: 'consent',
      ctx,
      referrerPolicy: 'same-origin',
      body: html`<p>${ctx.t('consent.intro', { client: client.clientName ?? client.clientId })}</p>
<ul class="scopes">
${scopeWords(ctx.t)
  .filter(([scope]) => requested.includes(scope))
  .map(([, words]) => html`<li>${words}</li>\n`)}</ul>
<p>${ctx.t('consent.signedInAs', { email: valid.user.email ?? valid.user.id })}</p>
<form method="post" action="${action}"><input type="hidden" name="decision" value="allow"><button type="submit" class="primary">${ctx.t('consent.allow')}</button></form>
<form method="post" action="${action}"><input type="hidden" name="decision" value="deny"><button type="submit" class="secondary">${ctx.t('consent.deny')}</button></form>`,
    }),
  );
}

/**
 * A client demanded a second factor the session has not proven: a person who has one (an
 * authenticator app, a passkey) signs in again on /login, where it is asked for; one who has none
 * cannot meet the demand, and the app is told so (`unmet_authentication_requirements`).
 */
async function stepUp(c: Context<AppEnv>, deps: InteractionDeps, found: Found, valid: ValidSession): Promise<Response> {
  const { provider, interaction } = found;
  const userId = valid.user.id;
  const hasSecondFactor = (await isSecondFactorRequired(deps, userId)) || (await deps.stores.passkeys.countUserPasskeys(userId)) > 0;
  if (!hasSecondFactor) {
    return finish(c, provider, {
      error: 'unmet_authentication_requirements',
      error_description: 'The app asks for a second factor, and this account has none.',
    });
  }
  rememberSessionBeforeSignIn(c, deps, interaction.uid, valid);
  return c.redirect(loginPageFor(interaction), 303);
}

/** /login, coming back here after; with the app's `login_hint` to fill in the address. */
function loginPageFor(interaction: Interaction): string {
  const query = new URLSearchParams({ return_to: `${INTERACTION_PATH}/${interaction.uid}` });
  if (typeof interaction.params.login_hint === 'string') query.set('login_hint', interaction.params.login_hint);
  return `/login?${query.toString()}`;
}

/** GET: the sign-in step hands over to /login and back; the consent step shows its page. */
async function showStep(c: Context<AppEnv>, deps: InteractionDeps): Promise<Response> {
  const found = await interactionOf(deps, c);
  if (found === null) return expired(c, deps);
  const { provider, interaction } = found;
  const valid = await readValid(deps, c);
  const backHere = loginPageFor(interaction);
  if (interaction.prompt.name === 'login') {
    const fresh = needsFreshSignIn(interaction);
    if (valid === null || (fresh && !signedInAfterRequest(c, deps, interaction.uid, valid))) {
      if (fresh) rememberSessionBeforeSignIn(c, deps, interaction.uid, valid);
      return c.redirect(backHere, 303);
    }
    const { amr, acr } = amrOf(valid.session.methods);
    if (interaction.prompt.reasons.includes(MFA_REASON) && acr !== 'mfa') return stepUp(c, deps, found, valid);
    return finish(c, provider, {
      login: { accountId: valid.user.id, amr, ...(acr === undefined ? {} : { acr }), ts: Math.floor(valid.session.createdAt.getTime() / 1000), remember: true },
    });
  }
  if (valid === null || valid.user.id !== interaction.session?.accountId) return c.redirect(backHere, 303);
  // A first-party app asked for a refresh token (its request carries prompt=consent: first-party.ts):
  // its consent is the team's, given when it was registered. Not a native app's: a redirect to a
  // scheme or a loopback port cannot prove which app receives it, so the person confirms each time.
  const client = await provider.Client.find(String(interaction.params.client_id));
  const firstParty = (client as unknown as Record<string, unknown> | undefined)?.[FIRST_PARTY] === true;
  if (firstParty && !interaction.prompt.reasons.includes('native_client_prompt')) return grantConsent(c, deps, found, valid.user.id);
  return consentPage(c, deps, found, valid);
}

/** POST: the consent page's Allow or Deny, by the account the engine is signing in. */
async function decide(c: Context<AppEnv>, deps: InteractionDeps): Promise<Response> {
  const found = await interactionOf(deps, c);
  if (found === null) return expired(c, deps);
  const { provider, interaction } = found;
  const valid = await readValid(deps, c);
  const accountId = interaction.session?.accountId;
  if (interaction.prompt.name !== 'consent' || valid === null || accountId === undefined || valid.user.id !== accountId) return expired(c, deps);
  // The page's own form only: urlencoded and small; anything else is not this page's answer.
  const length = Number(c.req.header('content-length'));
  if (!(c.req.header('content-type') ?? '').startsWith('application/x-www-form-urlencoded') || !(length <= MAX_FORM_BYTES)) return expired(c, deps);
  const decision = new URLSearchParams(await c.req.text()).get('decision');
  if (decision !== 'allow') return finish(c, provider, { error: 'access_denied', error_description: 'The person declined to give the app access.' });
  return grantConsent(c, deps, found, accountId);
}

/** Gives the client what the engine found missing (scopes, claims, resources), audits it, and goes on. */
async function grantConsent(c: Context<AppEnv>, deps: InteractionDeps, found: Found, accountId: string): Promise<Response> {
  const { provider, interaction } = found;
  const clientId = String(interaction.params.client_id);
  const earlier = interaction.grantId === undefined ? undefined : await provider.Grant.find(interaction.grantId);
  const grant = earlier ?? new provider.Grant({ accountId, clientId });
  const details = interaction.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
  if (details.missingOIDCScope !== undefined) grant.addOIDCScope(details.missingOIDCScope.join(' '));
  if (details.missingOIDCClaims !== undefined) grant.addOIDCClaims(details.missingOIDCClaims);
  for (const [resource, scopes] of Object.entries(details.missingResourceScopes ?? {})) grant.addResourceScope(resource, scopes.join(' '));
  const grantId = await grant.save();
  const { requestContext } = c.var;
  await deps.stores.audit.recordEvent({
    type: 'oidc_consent_granted',
    userId: accountId,
    ip: requestContext.ip,
    userAgent: requestContext.userAgent,
    metadata: { clientId, scopes: (details.missingOIDCScope ?? []).join(' ') },
    at: requestContext.now,
  });
  return finish(c, provider, { consent: { grantId } });
}

export function createInteractionRoutes(deps: InteractionDeps): Hono<AppEnv> {
  return new Hono<AppEnv>().get(`${INTERACTION_PATH}/:uid`, (c) => showStep(c, deps)).post(`${INTERACTION_PATH}/:uid`, (c) => decide(c, deps));
}
