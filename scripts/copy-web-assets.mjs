// Copies the pages' static files (plain JS and CSS, no build step of their own) next to the
// compiled web module, where src/web/routes.ts reads them at start; the browser build of
// @simplewebauthn/browser beside them as webauthn.js (passkeys, served from this origin: no CDN);
// and the API reference viewer's two files from the swagger-ui-dist package (a devDependency: the
// build carries them), which src/web/docs-page.ts reads when /docs is first opened.
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

cpSync(new URL('../src/web/assets/', import.meta.url), new URL('../dist/web/assets/', import.meta.url), { recursive: true });

const require = createRequire(import.meta.url);
// The package exports only its module entry; its UMD bundle sits two folders up from it.
const packageRoot = path.resolve(path.dirname(require.resolve('@simplewebauthn/browser')), '..');
const bundle = readFileSync(path.join(packageRoot, 'dist/bundle/index.umd.min.js'), 'utf8');
const { version, license } = JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8'));
writeFileSync(
  new URL('../dist/web/assets/webauthn.js', import.meta.url),
  `/*! @simplewebauthn/browser ${version} (${license} License, Copyright (c) Matthew Miller) */\n${bundle}`,
);

const viewer = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const target = new URL('../dist/web/assets/swagger-ui/', import.meta.url);
mkdirSync(target, { recursive: true });
for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css', 'LICENSE', 'NOTICE']) cpSync(path.join(viewer, file), new URL(file, target));
