// Writes .env.example from CONFIG_VARIABLES in src/config.ts (composed from each capability's
// settings.ts), through the build (`npm run env-example` builds first). test/env-file.test.ts fails when the committed file differs, so a
// new variable cannot be forgotten there.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderEnvExample } from '../dist/env-file.js';

const target = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '.env.example');
fs.writeFileSync(target, renderEnvExample());
console.log(`wrote ${path.relative(process.cwd(), target) || target}`);
