/**
 * @module GET /docs: the API reference, Swagger UI rendering /api/openapi.json, with every file
 * served from /assets (no CDN). The viewer's files (about 2 MB, from the swagger-ui-dist package,
 * copied into dist/web/assets/swagger-ui by `npm run build`) are read only when /docs or one of
 * them is first requested, then kept.
 *
 * Content-Security-Policy: the pages' own policy (web/routes.ts), nothing added: scripts and styles
 * from this origin only, no inline script (the initializer is its own file, /assets/docs.js) and no
 * inline style. Swagger UI (React) sets its styles through the DOM (element.style), which a policy
 * does not restrict, so `style-src 'unsafe-inline'` is not needed (test/browser-docs.test.ts renders
 * the page, expands an operation and runs "Try it out" with no violation).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Hono } from 'hono';
import type { AppEnv } from '../http/env.js';
import type { RouteDoc } from '../http/route-docs.js';
import { securityHeaders } from '../http/security-headers.js';
import { serveStaticAsset, staticAsset, type StaticAsset } from './static-asset.js';

export const DOCS_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/** The viewer's files, by their path under /assets. */
const VIEWER_ASSETS = {
  '/assets/swagger-ui/swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', contentType: 'text/javascript; charset=utf-8' },
  '/assets/swagger-ui/swagger-ui.css': { file: 'swagger-ui.css', contentType: 'text/css; charset=utf-8' },
} as const;

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gatehouse API reference</title>
<link rel="stylesheet" href="/assets/swagger-ui/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/assets/swagger-ui/swagger-ui-bundle.js"></script>
<script src="/assets/docs.js"></script>
</body>
</html>
`;

/**
 * Where the viewer's files are: next to the compiled module after `npm run build`, else (running
 * from the TypeScript sources, in tests) in the swagger-ui-dist package itself.
 */
function viewerFolder(): string {
  const built = fileURLToPath(new URL('./assets/swagger-ui/', import.meta.url));
  if (existsSync(path.join(built, 'swagger-ui-bundle.js'))) return built;
  return path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

export function addDocsRoutes(app: Hono<AppEnv>, options: { httpsBaseUrl: boolean }): void {
  const headers = securityHeaders({ contentSecurityPolicy: DOCS_CONTENT_SECURITY_POLICY, httpsBaseUrl: options.httpsBaseUrl });
  app.get('/docs', (c) => {
    for (const [name, value] of headers) c.header(name, value);
    return c.html(DOCS_PAGE);
  });
  const loaded = new Map<string, StaticAsset>();
  for (const [assetPath, { file, contentType }] of Object.entries(VIEWER_ASSETS)) {
    app.get(assetPath, (c) => {
      let asset = loaded.get(assetPath);
      if (asset === undefined) {
        asset = staticAsset(readFileSync(path.join(viewerFolder(), file)), contentType);
        loaded.set(assetPath, asset);
      }
      return serveStaticAsset(c, asset);
    });
  }
}

export const docsRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/docs',
    tag: 'Pages',
    summary: 'The API reference: this document rendered by Swagger UI, served from /assets',
    answers: [{ status: 200, description: 'The page.', mediaType: 'text/html' }],
  },
  ...Object.entries(VIEWER_ASSETS).map(([assetPath, { contentType }]): RouteDoc => ({
    method: 'get',
    path: assetPath,
    tag: 'Assets',
    summary: "The API reference viewer's file (Swagger UI), read on first request",
    answers: [
      { status: 200, description: 'The file (ETag; 304 to If-None-Match).', mediaType: contentType.split(';')[0] ?? contentType },
      { status: 304, description: 'Not modified.' },
    ],
  })),
];
