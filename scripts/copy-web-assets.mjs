// Copies the pages' static files (plain JS and CSS, no build step of their own) next to the
// compiled web module, where src/web/routes.ts reads them at start; and the API reference
// viewer's two files from the swagger-ui-dist package (a devDependency: the build carries them),
// which src/web/docs-page.ts reads when /docs is first opened.
import { cpSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

cpSync(new URL('../src/web/assets/', import.meta.url), new URL('../dist/web/assets/', import.meta.url), { recursive: true });

const viewer = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const target = new URL('../dist/web/assets/swagger-ui/', import.meta.url);
mkdirSync(target, { recursive: true });
for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css', 'LICENSE', 'NOTICE']) cpSync(path.join(viewer, file), new URL(file, target));
