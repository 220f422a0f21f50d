/**
 * @module GET /assets/brand/:file: the logo, the generated brand stylesheet and BRAND_CSS_FILE,
 * each at a URL holding a hash of its content, so a browser keeps it for a year and a changed
 * file is a new URL. Any other name under /assets/brand/ (an old hash too) is 404.
 */
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { notFound } from '../errors.js';
import type { AppEnv } from '../http/env.js';
import type { RouteDoc } from '../http/route-docs.js';
import type { BrandAsset, BrandAssets } from './brand.js';

/**
 * An SVG is a document that may carry script, and anyone can open the logo's URL on its own, on
 * our origin. Opened that way, it runs in a sandbox (an opaque origin: no cookies, no storage, no
 * script) with nothing to load but its own inline styles. Shown by an <img>, a browser runs no
 * script in an SVG anyway.
 */
export const SVG_CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

/** The URL changes with the content, so the answer may be kept as long as browsers allow. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

function serveBrandAsset(c: Context<AppEnv>, asset: BrandAsset): Response {
  // Set on the response itself: the answer's defaults (no-store, the API's policy) do not replace them.
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Cache-Control', IMMUTABLE);
  if (asset.svg) c.header('Content-Security-Policy', SVG_CONTENT_SECURITY_POLICY);
  // The same bytes for every answer (web/static-asset.ts says why).
  return c.body(asset.body, 200, { 'Content-Type': asset.contentType });
}

export function createBrandRoutes(assets: BrandAssets): Hono<AppEnv> {
  const byName = new Map<string, BrandAsset>();
  for (const asset of [assets.logo, assets.brandCss, assets.customCss]) {
    if (asset !== null) byName.set(asset.path.slice('/assets/brand/'.length), asset);
  }
  const app = new Hono<AppEnv>();
  app.get('/assets/brand/:file', (c) => {
    const asset = byName.get(c.req.param('file'));
    if (asset === undefined) throw notFound('No such brand file.');
    return serveBrandAsset(c, asset);
  });
  return app;
}

const brandFileParam = z.object({
  file: z.string().describe('logo-<hash>.svg or logo-<hash>.png (BRAND_LOGO_FILE), brand-<hash>.css (from BRAND_COLOR), custom-<hash>.css (BRAND_CSS_FILE)'),
});

export const brandRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/assets/brand/:file',
    tag: 'Assets',
    summary: 'A file of the brand: the logo or a stylesheet, at a URL holding a hash of its content',
    description:
      "Linked from every page when the brand is set. Kept a year (`Cache-Control: public, max-age=31536000, immutable`); a changed file gets a new URL. An SVG logo is answered with `Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; sandbox`, so a script inside it never runs.",
    params: brandFileParam,
    answers: [{ status: 200, description: 'The file: `image/svg+xml` or `image/png` (the logo), `text/css` (a stylesheet).' }],
    errors: ['not_found'],
  },
];
