/**
 * The brand over HTTP: BRAND_LOGO_FILE, BRAND_COLOR and BRAND_CSS_FILE refused at start when
 * wrong (naming the variable and the problem), the files served under /assets/brand/ at URLs
 * that change with their content, an SVG logo sandboxed, the pages' CSP unchanged, and the
 * markup the layout takes (`brandHead`, `brandMark`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { brandHead, brandMark, generatedBrandCss } from '../src/brand/brand.js';
import { SVG_CONTENT_SECURITY_POLICY } from '../src/brand/routes.js';
import { contrastWithWhite } from '../src/brand/settings.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { PAGE_CONTENT_SECURITY_POLICY } from '../src/web/routes.js';
import { createTestGatehouse, describeEachDialect, TEST_JWT_SECRET, type TestGatehouse } from './support/harness.js';

/** A 1×1 PNG, whole and valid. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const SVG = `<?xml version="1.0" encoding="UTF-8"?>
<!-- the team's logo -->
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 40"><script>document.title = 'ran'</script><rect width="120" height="40" fill="#1f4fd1"/></svg>
`;
const CSS = '.card { border-radius: 0; }\n';

let dir: string;
const file = (name: string): string => path.join(dir, name);

function write(name: string, content: string | Uint8Array): string {
  fs.writeFileSync(file(name), content);
  return file(name);
}

/** The problems loadConfig reports for `env`; [] when it starts. */
function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig({ JWT_SECRET: TEST_JWT_SECRET, ...env });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

const brandOf = (env: Record<string, string>) => loadConfig({ JWT_SECRET: TEST_JWT_SECRET, ...env }).brand;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-brand-'));
  write('logo.svg', SVG);
  write('logo.png', PNG);
  // Content decides, not the name.
  write('really-a-png.svg', PNG);
  write('notes.svg', 'Our logo is blue.\n');
  write('huge.svg', `<svg xmlns="http://www.w3.org/2000/svg">${'<g/>'.repeat(140 * 1024)}</svg>`);
  write('custom.css', CSS);
  write('binary.css', Buffer.from([0xff, 0xfe, 0x00, 0x41]));
  write('huge.css', `/* ${'x'.repeat(257 * 1024)} */`);
  fs.mkdirSync(file('folder.svg'));
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the brand settings, at start', () => {
  test('BRAND_COLOR must be #rrggbb', () => {
    for (const value of ['blue', '#12345', '#1234567', '1f4fd1', '#gg0000']) {
      expect(problemsOf({ BRAND_COLOR: value })).toEqual([`BRAND_COLOR: expected a colour as #rrggbb (such as #1f4fd1), got "${value}"`]);
    }
    expect(brandOf({ BRAND_COLOR: '#1F4FD1' }).color).toBe('#1f4fd1');
  });

  test('BRAND_COLOR below 4.5:1 against white text is refused, with its ratio never rounded up', () => {
    expect(problemsOf({ BRAND_COLOR: '#ffcc00' })).toEqual([
      'BRAND_COLOR: #ffcc00 has a contrast of 1.51:1 with white text; it needs at least 4.5:1 (a darker shade of it will do)',
    ]);
    // #777777 is 4.48:1: refused, and not reported as "4.5:1".
    expect(problemsOf({ BRAND_COLOR: '#777777' })[0]).toContain('has a contrast of 4.47:1');
    expect(problemsOf({ BRAND_COLOR: '#767676' })).toEqual([]);
    expect(contrastWithWhite('#000000')).toBeCloseTo(21, 5);
    expect(contrastWithWhite('#ffffff')).toBeCloseTo(1, 5);
  });

  test('BRAND_LOGO_FILE is recognised by its content: a PNG named .svg is a PNG, text named .svg is refused', () => {
    expect(brandOf({ BRAND_LOGO_FILE: file('really-a-png.svg') }).logo?.type).toBe('png');
    expect(brandOf({ BRAND_LOGO_FILE: file('logo.svg') }).logo?.type).toBe('svg');
    expect(problemsOf({ BRAND_LOGO_FILE: file('notes.svg') })).toEqual([
      `BRAND_LOGO_FILE: ${file('notes.svg')} is neither a PNG image nor an SVG document (recognised by content, not by name)`,
    ]);
  });

  test('a logo that is too big, missing or a folder stops the start, naming the variable', () => {
    expect(problemsOf({ BRAND_LOGO_FILE: file('huge.svg') })).toEqual([`BRAND_LOGO_FILE: ${file('huge.svg')} is 561 KiB; it may be at most 512 KiB`]);
    expect(problemsOf({ BRAND_LOGO_FILE: file('absent.png') })).toEqual([`BRAND_LOGO_FILE: cannot read ${file('absent.png')}: no such file (ENOENT)`]);
    expect(problemsOf({ BRAND_LOGO_FILE: file('folder.svg') })).toEqual([`BRAND_LOGO_FILE: ${file('folder.svg')} is not a file`]);
  });

  test('BRAND_CSS_FILE must be text of at most 256 KiB; every bad variable is listed at once', () => {
    expect(problemsOf({ BRAND_CSS_FILE: file('binary.css'), BRAND_COLOR: 'red', BRAND_LOGO_FILE: file('huge.css') })).toEqual([
      'BRAND_COLOR: expected a colour as #rrggbb (such as #1f4fd1), got "red"',
      `BRAND_LOGO_FILE: ${file('huge.css')} is neither a PNG image nor an SVG document (recognised by content, not by name)`,
      `BRAND_CSS_FILE: ${file('binary.css')} is not a stylesheet (expected UTF-8 text)`,
    ]);
    expect(problemsOf({ BRAND_CSS_FILE: file('huge.css') })).toEqual([`BRAND_CSS_FILE: ${file('huge.css')} is 258 KiB; it may be at most 256 KiB`]);
  });

  test('unset, there is no brand: no stylesheet, no logo', () => {
    const brand = brandOf({});
    expect(brand).toEqual({ color: null, logo: null, css: null });
    expect(brandHead(brand).value).toBe('');
    expect(brandMark(brand, 'Acme').value).toBe('');
    expect(generatedBrandCss(brand)).toBeNull();
  });
});

describe('brandHead and brandMark', () => {
  test('link the generated stylesheet, then the custom one, and show the logo named by the product', () => {
    const brand = brandOf({ BRAND_COLOR: '#1f4fd1', BRAND_LOGO_FILE: file('logo.svg'), BRAND_CSS_FILE: file('custom.css') });
    expect(brandHead(brand).value).toMatch(
      /^<link rel="stylesheet" href="\/assets\/brand\/brand-[0-9a-f]{8}\.css">\n<link rel="stylesheet" href="\/assets\/brand\/custom-[0-9a-f]{8}\.css">\n$/,
    );
    expect(brandMark(brand, 'Tom & Jerry "Co"').value).toMatch(
      /^<img class="brand-logo" src="\/assets\/brand\/logo-[0-9a-f]{8}\.svg" alt="Tom &amp; Jerry &quot;Co&quot;" height="40">$/,
    );
  });

  test('the generated stylesheet recolours the header and the buttons through the pages’ own variables', () => {
    const css = generatedBrandCss(brandOf({ BRAND_COLOR: '#1F4FD1' }))!;
    expect(css).toContain('--brand-color: #1f4fd1;');
    expect(css).toContain('--brand-color-contrast: #ffffff;');
    expect(css).toContain('--primary: var(--brand-color);');
    // 20% towards black for the hover.
    expect(css).toContain('--primary-hover: #193fa7;');
    expect(css).toMatch(/\.site-header \{[^}]*var\(--brand-color\)/);
    expect(css).not.toContain('.brand-logo');
  });

  test('the URLs change with the content', () => {
    write('changing.svg', SVG);
    const before = brandOf({ BRAND_LOGO_FILE: file('changing.svg'), BRAND_CSS_FILE: file('custom.css'), BRAND_COLOR: '#1f4fd1' });
    write('changing.svg', SVG.replace('#1f4fd1', '#17612f'));
    write('custom.css', `${CSS}h1 { font-size: 2rem; }\n`);
    const after = brandOf({ BRAND_LOGO_FILE: file('changing.svg'), BRAND_CSS_FILE: file('custom.css'), BRAND_COLOR: '#17612f' });
    write('custom.css', CSS);
    const links = (brand: typeof before): string[] =>
      [...`${brandHead(brand).value}${brandMark(brand, 'A').value}`.matchAll(/"(\/assets\/brand\/[^"]+)"/g)].map((m) => m[1]!);
    expect(links(before)).toHaveLength(3);
    expect(links(after)).toHaveLength(3);
    for (const [index, url] of links(before).entries()) expect(links(after)[index]).not.toBe(url);
    // The same content, the same URL.
    expect(links(brandOf({ BRAND_LOGO_FILE: file('logo.svg') }))).toEqual(links(brandOf({ BRAND_LOGO_FILE: file('logo.svg') })));
  });
});

describeEachDialect('the brand files over HTTP', (dialect) => {
  let t: TestGatehouse;
  let plain: TestGatehouse;
  beforeAll(async () => {
    t = await createTestGatehouse(dialect, { env: { BRAND_COLOR: '#1f4fd1', BRAND_LOGO_FILE: file('logo.svg'), BRAND_CSS_FILE: file('custom.css') } });
    plain = await createTestGatehouse(dialect);
  });
  afterAll(async () => {
    await t?.close();
    await plain?.close();
  });

  const urlsOf = (gatehouse: TestGatehouse): string[] =>
    [
      ...`${brandHead(gatehouse.gatehouse.config.brand).value}${brandMark(gatehouse.gatehouse.config.brand, 'Acme').value}`.matchAll(
        /"(\/assets\/brand\/[^"]+)"/g,
      ),
    ].map((m) => m[1]!);

  test('the SVG logo: its bytes, image/svg+xml, kept a year, and sandboxed so no script in it runs', async () => {
    const logo = urlsOf(t).find((url) => url.endsWith('.svg'))!;
    const response = await t.request('GET', logo);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).toString('utf8')).toBe(SVG);
    expect(response.headers.get('content-type')).toBe('image/svg+xml');
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
    expect(SVG_CONTENT_SECURITY_POLICY).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  test('the stylesheets: generated from BRAND_COLOR, and BRAND_CSS_FILE as it is', async () => {
    const [brandCss, customCss] = urlsOf(t);
    const generated = await t.request('GET', brandCss!);
    expect(generated.status).toBe(200);
    expect(generated.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(generated.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(generated.headers.get('x-content-type-options')).toBe('nosniff');
    const text = await generated.text();
    expect(text).toContain(':root {\n  --brand-color: #1f4fd1;\n  --brand-color-contrast: #ffffff;');
    expect(text).toContain('.brand-logo');
    const custom = await t.request('GET', customCss!);
    expect(await custom.text()).toBe(CSS);
    expect(custom.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  test('a PNG logo is served as image/png at a .png URL, whatever its file was called', async () => {
    const png = await createTestGatehouse(dialect, { env: { BRAND_LOGO_FILE: file('really-a-png.svg') } });
    try {
      const [logo] = urlsOf(png).filter((url) => url.includes('/logo-'));
      expect(logo).toMatch(/^\/assets\/brand\/logo-[0-9a-f]{8}\.png$/);
      const response = await png.request('GET', logo!);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await response.arrayBuffer())).toEqual(PNG);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      // Not a document: the answer's usual policy, not the SVG's sandbox.
      expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    } finally {
      await png.close();
    }
  });

  test('any other name under /assets/brand/ is 404, an old hash or without the brand', async () => {
    const [brandCss] = urlsOf(t);
    for (const url of ['/assets/brand/logo.svg', '/assets/brand/brand-00000000.css', '/assets/brand/..%2Fapp.css']) {
      const response = await t.request('GET', url);
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: string }).error).toBe('not_found');
    }
    expect((await plain.request('GET', brandCss!)).status).toBe(404);
    expect(urlsOf(plain)).toEqual([]);
  });

  test("the pages' Content-Security-Policy is byte for byte the same with the brand set", async () => {
    for (const page of ['/login', '/register']) {
      const branded = (await t.request('GET', page)).headers.get('content-security-policy');
      const unbranded = (await plain.request('GET', page)).headers.get('content-security-policy');
      expect(branded).toBe(unbranded);
      expect(branded).toBe(PAGE_CONTENT_SECURITY_POLICY);
    }
    // Same-origin stylesheets and images are what that policy already allows.
    expect(PAGE_CONTENT_SECURITY_POLICY).toContain("style-src 'self'");
    expect(PAGE_CONTENT_SECURITY_POLICY).toContain("img-src 'self'");
  });

  test('every page links the brand after the pages’ stylesheet, and shows the logo named by APP_NAME in the header; the CSP stays the same', async () => {
    const defaultCsp = (await plain.request('GET', '/login')).headers.get('content-security-policy');
    const plainPage = await (await plain.request('GET', '/login')).text();
    expect(plainPage).not.toContain('/assets/brand/');
    expect(plainPage).toContain('<header class="site-header"><span class="brand">Gatehouse</span></header>');
    const cases: { env: Record<string, string>; links: RegExp[]; logo: boolean }[] = [
      { env: { BRAND_COLOR: '#1f4fd1' }, links: [/brand-[0-9a-f]{8}\.css/], logo: false },
      { env: { BRAND_LOGO_FILE: file('logo.png') }, links: [/brand-[0-9a-f]{8}\.css/], logo: true },
      { env: { BRAND_CSS_FILE: file('custom.css') }, links: [/custom-[0-9a-f]{8}\.css/], logo: false },
    ];
    for (const { env, links, logo } of cases) {
      const branded = await createTestGatehouse(dialect, { env: { ...env, APP_NAME: 'Acme & Co' } });
      try {
        for (const pagePath of ['/login', '/register', '/forgot-password']) {
          const response = await branded.request('GET', pagePath);
          expect(response.status).toBe(200);
          // Compared as strings: the brand adds same-origin files and nothing to the policy.
          expect(response.headers.get('content-security-policy')).toBe(defaultCsp);
          const page = await response.text();
          const stylesheets = [...page.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((m) => m[1]!);
          expect(stylesheets[0]).toBe('/assets/app.css');
          expect(stylesheets.slice(1)).toHaveLength(links.length);
          links.forEach((link, at) => expect(stylesheets[at + 1]).toMatch(new RegExp(`^/assets/brand/${link.source}$`)));
          const header = /<header class="site-header">([\s\S]*?)<\/header>/.exec(page)![1]!;
          if (logo) {
            expect(header).toMatch(
              /^<span class="brand"><img class="brand-logo" src="\/assets\/brand\/logo-[0-9a-f]{8}\.png" alt="Acme &amp; Co" height="40"><\/span>$/,
            );
          } else {
            expect(header).toBe('<span class="brand">Acme &amp; Co</span>');
          }
          // Every URL the page names is served.
          for (const url of [...stylesheets.slice(1), ...[...header.matchAll(/src="([^"]+)"/g)].map((m) => m[1]!)]) {
            expect((await branded.request('GET', url)).status).toBe(200);
          }
        }
      } finally {
        await branded.close();
      }
    }
    // All three at once: the generated stylesheet, then the team's own, last.
    const page = await (await t.request('GET', '/login')).text();
    expect([...page.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((m) => m[1]!.replace(/-[0-9a-f]{8}\./, '-#.'))).toEqual([
      '/assets/app.css',
      '/assets/brand/brand-#.css',
      '/assets/brand/custom-#.css',
    ]);
  });

  test('a bad brand stops the start before anything is opened', async () => {
    await expect(createTestGatehouse(dialect, { env: { BRAND_COLOR: '#ffcc00' } })).rejects.toThrow(
      'BRAND_COLOR: #ffcc00 has a contrast of 1.51:1 with white text; it needs at least 4.5:1',
    );
    await expect(createTestGatehouse(dialect, { env: { BRAND_LOGO_FILE: file('notes.svg') } })).rejects.toThrow(
      /BRAND_LOGO_FILE: .*notes\.svg is neither a PNG/,
    );
  });
});
