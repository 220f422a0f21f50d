/**
 * The settings each capability declares beside it stay what the loader can compose: every
 * declared variable has its row in docs/configuration.md (and every row names a declared one),
 * and a settings module imports nothing of ours but the toolkit, so the loader that imports them
 * all never closes an import cycle.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { CONFIG_VARIABLES } from '../src/config.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const SRC = path.join(ROOT, 'src');

/** `src/server-settings.ts` and every `src/<folder>/settings.ts`. */
function settingsModules(): string[] {
  const modules = [path.join(SRC, 'server-settings.ts')];
  for (const entry of fs.readdirSync(SRC, { withFileTypes: true })) {
    const file = path.join(SRC, entry.name, 'settings.ts');
    if (entry.isDirectory() && fs.existsSync(file)) modules.push(file);
  }
  return modules;
}

/** Modules of constants that import nothing, which a settings module may read its allowed values from. */
const LEAF_MODULES = [path.join(SRC, 'i18n', 'languages.js')];

describe('settings declarations', () => {
  test('every declared variable has its row in docs/configuration.md, and every row names a declared variable', () => {
    const rows = fs
      .readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('| `'));
    // The first cell of a row names its variables; OIDC_<ID>_* are built from OIDC_PROVIDERS.
    const documented = new Set(rows.flatMap((row) => [...(row.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1])));
    const declared = CONFIG_VARIABLES.map((variable) => variable.name);
    expect(declared.filter((name) => !documented.has(name))).toEqual([]);
    expect([...documented].filter((name) => !declared.includes(name as (typeof declared)[number]))).toEqual([]);
  });

  test('a leaf module stays a leaf: it imports nothing', () => {
    for (const leaf of LEAF_MODULES) expect(fs.readFileSync(leaf.replace(/\.js$/, '.ts'), 'utf8')).not.toMatch(/^import\b/m);
  });

  test('a settings module imports only the toolkit (src/settings.ts), zod, node and leaf modules of constants', () => {
    const modules = settingsModules();
    expect(modules.length).toBeGreaterThan(10);
    const strays: string[] = [];
    for (const file of modules) {
      const code = fs.readFileSync(file, 'utf8');
      for (const match of code.matchAll(/^import\b[^;]*?from '([^']+)'/gms)) {
        const specifier = match[1] ?? '';
        const target = path.resolve(path.dirname(file), specifier);
        const toolkit = target === path.join(SRC, 'settings.js');
        // A list of constants that itself imports nothing (the supported languages) cannot close a cycle.
        const leaf = LEAF_MODULES.includes(target);
        if (!toolkit && !leaf && specifier !== 'zod' && !specifier.startsWith('node:')) strays.push(`${path.relative(ROOT, file)} imports ${specifier}`);
      }
    }
    expect(strays).toEqual([]);
  });
});
