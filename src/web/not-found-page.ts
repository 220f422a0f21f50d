/**
 * @module The page a person's browser gets for an address where there is no page: the layout, in
 * the person's language, status 404. Only for a GET (or HEAD) that accepts text/html outside
 * /api/: the API, and any client that asks for JSON, keep the JSON 404 the app answers
 * (`{ "error": "not_found" }`), whose code is the contract.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { AppEnv } from '../http/env.js';
import { html, renderLayout, type PageContext } from './html.js';

export function renderNotFoundPage(ctx: PageContext): string {
  return renderLayout({
    title: ctx.t('notFound.title'),
    page: 'not-found',
    ctx,
    body: html`<p>${ctx.t('notFound.intro')}</p>
<nav class="links" aria-label="${ctx.t('common.otherActions')}">
<p><a href="/dashboard">${ctx.t('common.goToAccount')}</a></p>
<p><a href="/login">${ctx.t('common.signIn')}</a></p>
</nav>`,
  });
}

/** A browser's navigation, not an API call: GET or HEAD, Accept names text/html, outside /api. */
export function wantsHtmlPage(c: Context<AppEnv>): boolean {
  const { method, path } = c.req;
  if (method !== 'GET' && method !== 'HEAD') return false;
  if (path === '/api' || path.startsWith('/api/')) return false;
  return (c.req.header('accept') ?? '').toLowerCase().includes('text/html');
}

/**
 * Registered after the pages' routes: it runs only where no GET route answers the path (every
 * route that would have answered is a handler in the match, middleware is `ALL`). There it
 * answers a browser with the page instead of letting the app's JSON 404 through. A path served
 * only by another method (a 405 for an API client) is no page either, so a browser gets this page
 * too. `headers` are the pages' own (their Content-Security-Policy).
 */
export function notFoundPages(render: (c: Context<AppEnv>) => string, headers: Iterable<readonly [string, string]>): MiddlewareHandler<AppEnv> {
  const pageHeaders = [...headers];
  return async (c, next) => {
    if (!wantsHtmlPage(c) || matchedRoutes(c).some((route) => route.method !== 'ALL')) return next();
    for (const [name, value] of pageHeaders) c.header(name, value);
    return c.html(render(c), 404);
  };
}
