// Copies the pages' static files (plain JS and CSS, no build step of their own) next to the
// compiled web module, where src/web/routes.ts reads them at start.
import { cpSync } from 'node:fs';

cpSync(new URL('../src/web/assets/', import.meta.url), new URL('../dist/web/assets/', import.meta.url), { recursive: true });
