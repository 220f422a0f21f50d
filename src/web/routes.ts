/**
 * @module The pages' HTTP edge: GET for each page, the static assets, and the headers every
 * page carries. Pages read the session only to decide the dashboard redirect (server-side, from
 * the cookie) and never touch the database themselves.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { Config } from '../config.js';
import type { Translate } from '../i18n/translator.js';
import type { AppEnv } from '../http/env.js';
import { brandHead, brandMark } from '../brand/brand.js';
import { pageContextOf, type PageContextSettings } from './page-context.js';
import type { RouteDoc } from '../http/route-docs.js';
import { describeSignInProviders, usableSignInProviders } from '../oauth/setup.js';
import { resolveReturnTo } from '../http/return-to.js';
import { securityHeaders } from '../http/security-headers.js';
import type { VerificationLinkDescription } from '../email-verification/flow.js';
import type { SessionCookieSettings } from '../session/cookie.js';
import type { SessionDeps } from '../session/flow.js';
import { readValidSession } from '../session/read-session.js';
import { rememberLanguage, toPublicUser, type UserStore } from '../users/user.js';
import { renderAccountPage, renderConfirmEmailChangePage } from './account-pages.js';
import type { InvitationPageData, OrganizationPageData } from '../organizations/pages-data.js';
import { renderAcceptInvitationPage, renderOrganizationPage } from './organization-pages.js';
import {
  renderDashboardPage,
  renderEmailSignInPage,
  renderForgotPasswordPage,
  renderLoginPage,
  renderNoScriptPage,
  renderRegisterPage,
  renderResetPasswordPage,
  renderVerifyEmailPage,
  type PageContext,
} from './pages.js';
import { addDocsRoutes, docsRouteDocs } from './docs-page.js';
import { notFoundPages, renderNotFoundPage } from './not-found-page.js';
import { serveStaticAsset, staticAsset, type StaticAsset } from './static-asset.js';

/**
 * Nothing but same-origin script, style and fetch; no inline code of any kind, no framing, no
 * <base> rewriting, and forms may only post back here.
 */
export const PAGE_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export const PAGE_PATHS = [
  '/login',
  '/register',
  '/forgot-password',
  '/reset-password',
  '/verify-email',
  '/dashboard',
  '/account',
  '/confirm-email-change',
  '/email-sign-in',
  '/accept-invitation',
] as const;

/** The page of one organization, for its members (anyone else gets the 404 page). */
export const ORGANIZATION_PAGE_PATH = '/organizations/:id';

/** The pages' static files: path → file in ./assets and its type (/assets/docs.js starts the API reference viewer). */
const ASSET_FILES = {
  '/assets/app.js': ['app.js', 'text/javascript; charset=utf-8'],
  '/assets/app.css': ['app.css', 'text/css; charset=utf-8'],
  '/assets/account.js': ['account.js', 'text/javascript; charset=utf-8'],
  '/assets/passkeys.js': ['passkeys.js', 'text/javascript; charset=utf-8'],
  '/assets/docs.js': ['docs.js', 'text/javascript; charset=utf-8'],
  '/assets/organizations.js': ['organizations.js', 'text/javascript; charset=utf-8'],
} as const;

/** The longest provider error text shown on the login page; the rest is cut off. */

export interface WebRouteDeps {
  config: Pick<
    Readonly<Config>,
    'mode' | 'devConveniences' | 'httpsBaseUrl' | 'defaultReturnTo' | 'oauthProblems' | 'github' | 'oidcProviders' | 'mail' | 'defaultLanguage' | 'brand'
  >;
  session: SessionDeps;
  cookie: SessionCookieSettings;
  /** The account and registration a verification link belongs to, read without spending it. */
  describeVerificationLink: (token: string, now: Date) => Promise<VerificationLinkDescription | null>;
  /** The address a sign-in link signs into, read without spending it. */
  describeEmailSignInLink: (token: string, now: Date) => Promise<{ email: string } | null>;
  /** Where a signed-in person's page language is remembered for their emails. */
  users: Pick<UserStore, 'setLanguage'>;
  organizations: {
    /** Every role an organization knows (ORG_ROLES_FILE's after the built-in ones). */
    roles: readonly string[];
    /** The organization with the reader's role; null when it is none of theirs. */
    forMember: (organizationId: string, userId: string) => Promise<OrganizationPageData | null>;
    /** What an invitation link names, read without spending it. */
    describeInvitation: (token: string, now: Date) => Promise<InvitationPageData | null>;
  };
}

/** The provider's error codes (SPEC §7) in plain words, naming the provider: each its catalog key. */
const SIGN_IN_ERRORS: Readonly<Record<string, (t: Translate, provider: string) => string>> = {
  invalid_state: (t, provider) => t('login.error.invalidState', { provider }),
  oauth_failed: (t, provider) => t('login.error.oauthFailed', { provider }),
  oauth_error: (t, provider) => t('login.error.oauthError', { provider }),
  account_disabled: (t) => t('error.account_disabled'),
};

/** Named when the query names no known provider: links made before it did were GitHub's. */
const DEFAULT_PROVIDER_NAME = 'GitHub';

/**
 * Only our own sentences: `error` picks one, and `message` is never shown. Anyone can send a link
 * to /login with any query, and text on our origin that looks like ours is a phishing tool
 * ("Your account is suspended, call …"). The provider's own text stays in the audit row.
 */
function loginMessage(
  t: Translate,
  query: Record<string, string>,
  providerNames: ReadonlyMap<string, string>,
): { kind: 'error' | 'success'; text: string } | undefined {
  const code = query.error;
  if (code !== undefined && code !== '') {
    // The name comes from our configuration, looked up by id, never from the query's text.
    const provider = providerNames.get(query.provider ?? '') ?? DEFAULT_PROVIDER_NAME;
    return { kind: 'error', text: SIGN_IN_ERRORS[code]?.(t, provider) ?? t('login.error.generic') };
  }
  if (query.signed_out === '1') return { kind: 'success', text: t('login.signedOut') };
  return undefined;
}

function loadAsset(name: string, contentType: string, body?: string): StaticAsset {
  // Read once at start; `npm run build` copies src/web/assets next to the compiled module.
  return staticAsset(body ?? readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8'), contentType);
}

/**
 * The browser build of @simplewebauthn/browser (window.SimpleWebAuthnBrowser), which the build
 * copies into the assets as webauthn.js (scripts/copy-web-assets.mjs); run from the sources, the
 * package's own bundle.
 */
function loadWebAuthnBrowser(): StaticAsset {
  const contentType = 'text/javascript; charset=utf-8';
  if (existsSync(new URL('./assets/webauthn.js', import.meta.url))) return loadAsset('webauthn.js', contentType);
  const root = path.resolve(path.dirname(createRequire(import.meta.url).resolve('@simplewebauthn/browser')), '..');
  return loadAsset('webauthn.js', contentType, readFileSync(path.join(root, 'dist/bundle/index.umd.min.js'), 'utf8'));
}

/** An app's login_hint, kept only when it reads as an email address (it is someone else's text). */
function emailHintOf(hint: string | undefined): string | undefined {
  return hint !== undefined && hint.length <= 254 && /^[^\s@<>"]+@[^\s@<>"]+$/.test(hint) ? hint : undefined;
}

/** Every static file of the pages, read once, by its path. */
function loadAssets(): Record<string, StaticAsset> {
  return {
    ...Object.fromEntries(Object.entries(ASSET_FILES).map(([assetPath, [file, contentType]]) => [assetPath, loadAsset(file, contentType)])),
    '/assets/webauthn.js': loadWebAuthnBrowser(),
  };
}

/** What every page's context shares, the brand's markup built once. */
export function pageSettingsOf(config: WebRouteDeps['config']): PageContextSettings {
  return {
    devMode: config.mode === 'development' && config.devConveniences,
    appName: config.mail.appName,
    defaultLanguage: config.defaultLanguage,
    httpsBaseUrl: config.httpsBaseUrl,
    brandHead: brandHead(config.brand),
    brandMark: brandMark(config.brand, config.mail.appName),
  };
}

export function createWebRoutes(deps: WebRouteDeps): Hono<AppEnv> {
  const pageSettings = pageSettingsOf(deps.config);
  const ctxOf = (c: Context<AppEnv>, returnTo?: string): PageContext => pageContextOf(c, pageSettings, returnTo);
  const pageHeaders = securityHeaders({ contentSecurityPolicy: PAGE_CONTENT_SECURITY_POLICY, httpsBaseUrl: deps.config.httpsBaseUrl });
  // Each usable sign-in provider gets a button, in the order of GET /api/auth/providers.
  const signInProviders = usableSignInProviders(deps.config);
  const providerNames = new Map(describeSignInProviders(deps.config).map(({ id, name }) => [id, name]));
  const assets = loadAssets();
  // The same check as the provider flow's: the raw path is kept as given, never a normalised
  // form (normalising `/.//evil.com` yields `//evil.com`, another host).
  const returnToOf = (c: Context<AppEnv>): string => resolveReturnTo(c.req.query('return_to'), deps.config.defaultReturnTo);
  const tokenOf = (c: Context<AppEnv>): string | null => {
    const token = c.req.query('token');
    return token === undefined || token === '' || token.length > 512 ? null : token;
  };

  const app = new Hono<AppEnv>();
  for (const path of [...PAGE_PATHS, ORGANIZATION_PAGE_PATH]) {
    app.use(path, async (c, next) => {
      for (const [name, value] of pageHeaders) c.header(name, value);
      await next();
    });
  }

  for (const [path, asset] of Object.entries(assets)) {
    app.get(path, (c) => serveStaticAsset(c, asset));
  }

  app.get('/', (c) => c.redirect('/dashboard', 302));
  app.get('/login', (c) => {
    const returnTo = returnToOf(c);
    const providers = signInProviders.map(({ id, name }) => ({ id, name, startUrl: `/api/auth/oauth/${id}?return_to=${encodeURIComponent(returnTo)}` }));
    const ctx = ctxOf(c, returnTo);
    return c.html(
      renderLoginPage(ctx, {
        returnTo,
        providers,
        message: loginMessage(ctx.t, c.req.query(), providerNames),
        secondFactor: c.req.query('mfa') === 'required',
        emailHint: emailHintOf(c.req.query('login_hint')),
        otherPageQuery: otherPageQueryOf(c, returnTo),
      }),
    );
  });
  app.get('/register', (c) => {
    const returnTo = returnToOf(c);
    const options = { returnTo, emailHint: emailHintOf(c.req.query('login_hint')), otherPageQuery: otherPageQueryOf(c, returnTo) };
    return c.html(renderRegisterPage(ctxOf(c, returnTo), options));
  });
  app.get('/forgot-password', (c) => c.html(renderForgotPasswordPage(ctxOf(c))));
  app.get('/reset-password', (c) => c.html(renderResetPasswordPage(ctxOf(c), { token: tokenOf(c) })));
  app.get('/verify-email', async (c) => {
    const token = tokenOf(c);
    const link = token === null ? null : await deps.describeVerificationLink(token, c.get('requestContext').now);
    return c.html(renderVerifyEmailPage(ctxOf(c), { token, link }));
  });
  app.get('/email-sign-in', async (c) => {
    const token = tokenOf(c);
    const link = token === null ? null : await deps.describeEmailSignInLink(token, c.get('requestContext').now);
    return c.html(renderEmailSignInPage(ctxOf(c), { token, email: link?.email ?? null }));
  });
  app.get('/dashboard', async (c) => {
    const valid = await readValidSession(c, deps);
    if (valid === null) return c.redirect(`/login?return_to=${encodeURIComponent('/dashboard')}`, 302);
    const ctx = ctxOf(c);
    if (ctx.languageChosen) await rememberLanguage(deps.users, valid.user, ctx.lang);
    return c.html(renderDashboardPage(ctx, { user: toPublicUser(valid.user) }));
  });
  app.get('/account', async (c) => {
    const valid = await readValidSession(c, deps);
    if (valid === null) return c.redirect(`/login?return_to=${encodeURIComponent('/account')}`, 302);
    const ctx = ctxOf(c);
    if (ctx.languageChosen) await rememberLanguage(deps.users, valid.user, ctx.lang);
    return c.html(renderAccountPage(ctx, { user: toPublicUser(valid.user), hasPassword: valid.user.passwordHash !== null }));
  });
  app.get('/confirm-email-change', (c) => c.html(renderConfirmEmailChangePage(ctxOf(c), { token: tokenOf(c) })));
  addOrganizationPages(app, deps, { ctxOf, tokenOf, pageHeaders });
  // The forms post with fetch; a post that arrives here means the script did not run.
  app.on('POST', [...PAGE_PATHS, ORGANIZATION_PAGE_PATH], (c) => c.html(renderNoScriptPage(ctxOf(c)), 400));
  addDocsRoutes(app, { httpsBaseUrl: deps.config.httpsBaseUrl });
  // Last: a browser asking for an address no route serves gets the 404 page (not-found-page.ts).
  app.use(
    '*',
    notFoundPages((c) => renderNotFoundPage(ctxOf(c)), pageHeaders),
  );

  return app;
}

/**
 * The query /login and /register give their link to each other: the return_to and login_hint the
 * page was opened with, so that someone sent to sign in (an invitation) who has no account yet
 * still comes back after registering. Empty when the page was opened without them.
 */
function otherPageQueryOf(c: Context<AppEnv>, returnTo: string): string {
  const query = new URLSearchParams();
  if (c.req.query('return_to') !== undefined) query.set('return_to', returnTo);
  const hint = emailHintOf(c.req.query('login_hint'));
  if (hint !== undefined) query.set('login_hint', hint);
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * /organizations/:id, for its members (no session: to sign in and back; anyone else, or an
 * organization that does not exist: the 404 page, as the API's 404), and /accept-invitation,
 * which reads its invitation without spending it: only the Accept button's POST to the API does.
 */
function addOrganizationPages(
  app: Hono<AppEnv>,
  deps: WebRouteDeps,
  page: {
    ctxOf: (c: Context<AppEnv>, returnTo?: string) => PageContext;
    tokenOf: (c: Context<AppEnv>) => string | null;
    pageHeaders: ReadonlyArray<[string, string]>;
  },
): void {
  const { ctxOf, tokenOf } = page;
  app.get(ORGANIZATION_PAGE_PATH, async (c) => {
    const valid = await readValidSession(c, deps);
    if (valid === null) return c.redirect(`/login?return_to=${encodeURIComponent(c.req.path)}`, 302);
    const organization = await deps.organizations.forMember(c.req.param('id'), valid.user.id);
    const ctx = ctxOf(c);
    if (organization === null) return c.html(renderNotFoundPage(ctx), 404);
    if (ctx.languageChosen) await rememberLanguage(deps.users, valid.user, ctx.lang);
    const options = { organization, userId: valid.user.id, roles: deps.organizations.roles, hasPassword: valid.user.passwordHash !== null };
    return c.html(renderOrganizationPage(ctx, options));
  });
  app.get('/accept-invitation', async (c) => {
    const token = tokenOf(c);
    const now = c.get('requestContext').now;
    const [invitation, valid] = await Promise.all([token === null ? null : deps.organizations.describeInvitation(token, now), readValidSession(c, deps)]);
    const user = valid === null ? null : { email: valid.user.email, emailVerified: valid.user.emailVerified };
    const selfPath = token === null ? '/accept-invitation' : `/accept-invitation?token=${encodeURIComponent(token)}`;
    return c.html(renderAcceptInvitationPage(ctxOf(c), { token, invitation, user, selfPath }));
  });
}

const pageQuery = z.object({
  return_to: z.string().optional().describe('login, register: a path on this origin to land on after signing in'),
  login_hint: z.string().optional().describe("login, register: an email address to fill in (an app's OpenID Connect login_hint, an invitation's address)"),
  token: z.string().optional().describe("reset-password, verify-email, email-sign-in, confirm-email-change, accept-invitation: the link's token"),
});

export const webRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/',
    tag: 'Pages',
    summary: 'Redirects to /dashboard',
    answers: [{ status: 302, description: 'To /dashboard.', headers: { Location: '/dashboard' } }],
  },
  ...PAGE_PATHS.map((pagePath): RouteDoc => ({
    method: 'get',
    path: pagePath,
    tag: 'Pages',
    summary: `The ${pagePath.slice(1)} page (HTML; its forms call the JSON API with fetch)`,
    ...(pagePath === '/dashboard' || pagePath === '/account' ? {} : { query: pageQuery }),
    answers: [
      { status: 200, description: 'The page.', mediaType: 'text/html' },
      ...(pagePath === '/dashboard' || pagePath === '/account'
        ? [{ status: 302, description: 'Not signed in: to /login.', headers: { Location: '/login?return_to=…' } }]
        : []),
    ],
  })),
  ...PAGE_PATHS.map((pagePath): RouteDoc => ({
    method: 'post',
    path: pagePath,
    tag: 'Pages',
    summary: 'A form posted without its script: a page saying that JavaScript is needed',
    answers: [{ status: 400, description: 'The page.', mediaType: 'text/html' }],
  })),
  {
    method: 'get',
    path: ORGANIZATION_PAGE_PATH,
    tag: 'Pages',
    summary: "An organization's page for its members: members and roles; invitations, renaming and deletion for those who may (HTML)",
    params: z.object({ id: z.string().describe("the organization's id") }),
    answers: [
      { status: 200, description: 'The page.', mediaType: 'text/html' },
      { status: 302, description: 'Not signed in: to /login.', headers: { Location: '/login?return_to=…' } },
      { status: 404, description: 'No such organization, or the reader is not a member: the page-not-found page.', mediaType: 'text/html' },
    ],
  },
  {
    method: 'post',
    path: ORGANIZATION_PAGE_PATH,
    tag: 'Pages',
    summary: 'A form posted without its script: a page saying that JavaScript is needed',
    params: z.object({ id: z.string().describe("the organization's id") }),
    answers: [{ status: 400, description: 'The page.', mediaType: 'text/html' }],
  },
  ...[...Object.entries(ASSET_FILES), ['/assets/webauthn.js', ['webauthn.js', 'text/javascript; charset=utf-8']] as const].map(
    ([assetPath, [, contentType]]): RouteDoc => ({
      method: 'get',
      path: assetPath,
      tag: 'Assets',
      summary: "A page's static file",
      answers: [
        { status: 200, description: 'The file (ETag; 304 to If-None-Match).', mediaType: contentType.split(';')[0] ?? contentType },
        { status: 304, description: 'Not modified.' },
      ],
    }),
  ),
  ...docsRouteDocs,
];
