/**
 * The documentation stays true: every relative link in the README, CONTRIBUTING, CHANGELOG and
 * docs/ resolves (to a file, and to a heading when it names one), every path that
 * docs/ARCHITECTURE.md names exists, the README stays short, and LICENSE is the MIT text.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const read = (relative: string): string => fs.readFileSync(path.join(ROOT, relative), 'utf8');

/** The Markdown files whose links are checked, relative to the repository root. */
function markdownFiles(): string[] {
  const docs = fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...docs];
}

/** The text outside fenced code blocks: a link or heading inside a code sample is not one. */
function withoutFencedCode(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

/** GitHub's heading anchor: lower-cased, punctuation dropped (but `-` and `_`), spaces to `-`. */
function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link in a heading counts by its text
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
}

/** Every anchor the headings of `markdown` produce, with GitHub's -1, -2 … for repeats. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFencedCode(markdown).split('\n')) {
    const match = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!match) continue;
    const slug = githubSlug(match[1] ?? '');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

interface Link {
  text: string;
  target: string;
}

/** Inline links and images `[text](target)` outside code; `target` without an optional title. */
function links(markdown: string): Link[] {
  // Code spans become a neutral word, so a link whose text is code still counts as a link, and
  // brackets written inside code do not.
  const prose = withoutFencedCode(markdown).replace(/`[^`\n]*`/g, 'code');
  const found: Link[] = [];
  for (const match of prose.matchAll(/!?\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    found.push({ text: match[1] ?? '', target: match[2] ?? '' });
  }
  return found;
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

/** What is wrong with each relative link of `file` (relative to the repository root). */
function brokenLinks(file: string): string[] {
  const problems: string[] = [];
  for (const { text, target } of links(read(file))) {
    if (isExternal(target)) continue;
    const written = `[${text}](${target})`;
    const hashAt = target.indexOf('#');
    const pathPart = decodeURIComponent(hashAt >= 0 ? target.slice(0, hashAt) : target);
    const anchor = hashAt >= 0 ? decodeURIComponent(target.slice(hashAt + 1)) : null;
    const resolved = pathPart === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), pathPart));
    if (resolved.startsWith('..') || !fs.existsSync(path.join(ROOT, resolved))) {
      problems.push(`${file}: ${written} points to ${resolved}, which does not exist`);
      continue;
    }
    if (anchor === null) continue;
    if (!fs.statSync(path.join(ROOT, resolved)).isFile()) {
      problems.push(`${file}: ${written} names a heading in ${resolved}, which is a folder`);
      continue;
    }
    if (!headingAnchors(read(resolved)).has(anchor.toLowerCase())) {
      problems.push(`${file}: ${written} names the heading #${anchor}, which ${resolved} does not have`);
    }
  }
  return problems;
}

const CHECKED_PREFIXES = ['src/', 'test/', 'bench/', 'scripts/', 'docs/'];

/** Paths in backticks that start with one of CHECKED_PREFIXES, as written. */
function namedPaths(markdown: string): string[] {
  const paths: string[] = [];
  for (const match of withoutFencedCode(markdown).matchAll(/`([^`\n]+)`/g)) {
    const span = (match[1] ?? '').trim();
    if (!CHECKED_PREFIXES.some((prefix) => span.startsWith(prefix))) continue;
    if (span.includes('*') || span.includes('<')) continue; // a pattern or a placeholder
    paths.push(span);
  }
  return paths;
}

/** What ARCHITECTURE-style `markdown` names that does not exist in the repository. */
function missingPaths(markdown: string, file: string): string[] {
  const problems: string[] = [];
  for (const written of namedPaths(markdown)) {
    const relative = written.replace(/:\d+(:\d+)?$/, '').replace(/\/+$/, '');
    if (!fs.existsSync(path.join(ROOT, relative))) problems.push(`${file}: \`${written}\` does not exist`);
  }
  return problems;
}

describe('documentation', () => {
  test.each(markdownFiles())('every relative link in %s resolves to a file and heading', (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  test('docs/ARCHITECTURE.md names only paths that exist', () => {
    const markdown = read('docs/ARCHITECTURE.md');
    expect(namedPaths(markdown).length).toBeGreaterThan(20);
    expect(missingPaths(markdown, 'docs/ARCHITECTURE.md')).toEqual([]);
  });

  test('docs/ARCHITECTURE.md maps every folder under src/', () => {
    const named = new Set(namedPaths(read('docs/ARCHITECTURE.md')).map((written) => written.replace(/\/+$/, '')));
    const folders: string[] = [];
    const walk = (relative: string): void => {
      for (const entry of fs.readdirSync(path.join(ROOT, relative), { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        folders.push(`${relative}/${entry.name}`);
        walk(`${relative}/${entry.name}`);
      }
    };
    walk('src');
    // A folder counts as mapped when it, or a file or folder inside it, is named.
    const unmapped = folders.filter((folder) => ![...named].some((p) => p === folder || p.startsWith(`${folder}/`)));
    expect(unmapped.map((folder) => `docs/ARCHITECTURE.md does not name ${folder}/`)).toEqual([]);
  });

  test('the README stays short and shows the two commands', () => {
    const readme = read('README.md');
    expect(readme.length, `README.md has ${readme.length} characters; move detail to docs/`).toBeLessThan(8000);
    expect(readme, 'README.md must show `npm install && npm start`').toContain('npm install && npm start');
    expect(readme, 'README.md must show `npm test`').toContain('npm test');
  });

  test('the user manual cites no document its readers do not have (the design, the spec)', () => {
    for (const file of markdownFiles()) {
      const cited = read(file)
        .split('\n')
        .map((line, index) => ({ line, number: index + 1 }))
        .filter(({ line }) => /\bDESIGN\b|\bSPEC\b|\bthe spec\b|\bspec's\b/.test(line));
      expect(cited.map(({ number, line }) => `${file}:${number}: ${line.trim()}`)).toEqual([]);
    }
  });

  test('LICENSE is the MIT license', () => {
    expect(read('LICENSE').startsWith('MIT License'), 'LICENSE must start with "MIT License"').toBe(true);
  });
});

describe('the checks themselves', () => {
  test('githubSlug() follows GitHub: lower case, punctuation dropped, spaces to dashes', () => {
    expect(githubSlug('Soak test: `npm run soak`')).toBe('soak-test-npm-run-soak');
    expect(githubSlug('Return paths (`return_to`)')).toBe('return-paths-return_to');
    expect(githubSlug('Comparing two builds: `bench/session-ab.mjs`')).toBe('comparing-two-builds-benchsession-abmjs');
    expect(githubSlug("Bird's eye view")).toBe('birds-eye-view');
  });

  test('missingPaths() reports a folder that does not exist, and skips patterns and placeholders', () => {
    const markdown = 'See `src/app.ts`, `src/no-such-folder/`, `src/app.ts:12`, `src/<feature>/` and `test/*.test.ts`.';
    expect(missingPaths(markdown, 'x.md')).toEqual(['x.md: `src/no-such-folder/` does not exist']);
  });
});
