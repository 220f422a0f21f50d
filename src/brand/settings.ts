/**
 * @module The brand's settings: the logo, the colour and the extra stylesheet of the pages
 * (`APP_NAME`, the product's name, is the outbox's: src/outbox/settings.ts).
 *
 * Unlike other settings, two of these name files, and the files are read here, once, while the
 * configuration loads. A file is part of the configuration: reading it in `loadConfig` lists a
 * missing, oversized or wrong file with every other bad variable, before the database or any
 * thread is opened (a capability's `build` runs after the shared parts exist, and `createGatehouse`
 * does not close them when a build throws), `gatehouse doctor` reports it too, and the pages and
 * the routes that serve the files share one copy of the bytes through the `Config`.
 * Only `node:fs`, `node:crypto` and src/settings.ts are imported, so the loader still imports
 * every settings module without a cycle.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { defineSettings, type SettingsReader } from '../settings.js';

/** A file of the brand, read at start. */
export interface BrandFile {
  /** The path as given (relative to the working directory), for messages. */
  readonly file: string;
  /** Never written to: every answer shares it. */
  readonly bytes: Uint8Array<ArrayBuffer>;
  /** The first 8 hex digits of the bytes' SHA-256: the file's URL changes with its content. */
  readonly hash: string;
}

/** A logo, recognised by its content (PNG signature, or an SVG document), never by its name. */
export interface BrandLogo extends BrandFile {
  readonly type: 'svg' | 'png';
}

export interface BrandConfig {
  /** `#rrggbb`, lower case, with at least 4.5:1 contrast against white text; null: the pages' own colours. */
  readonly color: string | null;
  readonly logo: BrandLogo | null;
  /** BRAND_CSS_FILE: loaded by every page after the pages' own stylesheet. */
  readonly css: BrandFile | null;
}

export interface BrandSettings {
  brand: Readonly<BrandConfig>;
}

export const MAX_LOGO_BYTES = 512 * 1024;
export const MAX_BRAND_CSS_BYTES = 256 * 1024;
/** WCAG 2.x level AA for normal text: white text on the brand colour (buttons) must reach it. */
export const MIN_CONTRAST_WITH_WHITE = 4.5;

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** An sRGB channel (0–255) in linear light, as WCAG 2.x defines relative luminance. */
function linearChannel(value: number): number {
  const c = value / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

/** The WCAG 2.x contrast ratio of `#rrggbb` with white (from 1 to 21). */
export function contrastWithWhite(color: string): number {
  const [r, g, b] = [1, 3, 5].map((at) => linearChannel(parseInt(color.slice(at, at + 2), 16))) as [number, number, number];
  const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return 1.05 / (luminance + 0.05);
}

/** The ratio as people read it, never rounded up past what it is (4.49 is "4.49", not "4.5"). */
export function formatContrast(ratio: number): string {
  return `${Math.floor(ratio * 100) / 100}:1`;
}

function readColor(reader: SettingsReader<'BRAND_COLOR'>): string | null {
  const raw = reader.read('BRAND_COLOR');
  if (raw === undefined) return null;
  if (!/^#[0-9a-fA-F]{6}$/.test(raw)) {
    reader.problem(`BRAND_COLOR: expected a colour as #rrggbb (such as #1f4fd1), got "${raw}"`);
    return null;
  }
  const color = raw.toLowerCase();
  const ratio = contrastWithWhite(color);
  if (ratio < MIN_CONTRAST_WITH_WHITE) {
    reader.problem(
      `BRAND_COLOR: ${color} has a contrast of ${formatContrast(ratio)} with white text; it needs at least ${MIN_CONTRAST_WITH_WHITE}:1 (a darker shade of it will do)`,
    );
    return null;
  }
  return color;
}

/** The file's bytes, or a problem naming the variable: missing, not a file, or over `maxBytes`. */
function readBrandFile(reader: Pick<SettingsReader<never>, 'problem'>, name: string, file: string, maxBytes: number): Uint8Array<ArrayBuffer> | null {
  try {
    const stat = statSync(file);
    if (!stat.isFile()) {
      reader.problem(`${name}: ${file} is not a file`);
      return null;
    }
    // Checked before reading: a wrong path to a large file must not fill the memory first.
    if (stat.size > maxBytes) {
      reader.problem(`${name}: ${file} is ${Math.ceil(stat.size / 1024)} KiB; it may be at most ${maxBytes / 1024} KiB`);
      return null;
    }
    return new Uint8Array(readFileSync(file));
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (message ?? String(error));
    reader.problem(`${name}: cannot read ${file}: ${why}${code ? ` (${code})` : ''}`);
    return null;
  }
}

/** UTF-8 text without NUL; null when the bytes are not that. */
function asText(bytes: Uint8Array): string | null {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return text.includes('\u0000') ? null : text;
  } catch {
    return null;
  }
}

/**
 * Whether `text` is an SVG document: its root element, after an optional BOM, XML declaration,
 * comments and doctype, is `<svg`.
 */
export function isSvgDocument(text: string): boolean {
  const prologue = /^\uFEFF?\s*(?:<\?xml[^>]*\?>\s*)?(?:(?:<!--[\s\S]*?-->|<!DOCTYPE[^>[]*(?:\[[\s\S]*?\])?\s*>)\s*)*/i;
  const rest = text.replace(prologue, '');
  return /^<svg[\s>/]/.test(rest);
}

export function logoTypeOf(bytes: Uint8Array): 'svg' | 'png' | null {
  if (bytes.length > PNG_SIGNATURE.length && PNG_SIGNATURE.every((byte, at) => bytes[at] === byte)) return 'png';
  const text = asText(bytes);
  return text !== null && isSvgDocument(text) ? 'svg' : null;
}

export function shortHash(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 8);
}

function readLogo(reader: SettingsReader<'BRAND_LOGO_FILE'>): BrandLogo | null {
  const file = reader.read('BRAND_LOGO_FILE');
  if (file === undefined) return null;
  const bytes = readBrandFile(reader, 'BRAND_LOGO_FILE', file, MAX_LOGO_BYTES);
  if (bytes === null) return null;
  const type = logoTypeOf(bytes);
  if (type === null) {
    reader.problem(`BRAND_LOGO_FILE: ${file} is neither a PNG image nor an SVG document (recognised by content, not by name)`);
    return null;
  }
  return Object.freeze({ file, bytes, hash: shortHash(bytes), type });
}

function readCss(reader: SettingsReader<'BRAND_CSS_FILE'>): BrandFile | null {
  const file = reader.read('BRAND_CSS_FILE');
  if (file === undefined) return null;
  const bytes = readBrandFile(reader, 'BRAND_CSS_FILE', file, MAX_BRAND_CSS_BYTES);
  if (bytes === null) return null;
  if (asText(bytes) === null) {
    reader.problem(`BRAND_CSS_FILE: ${file} is not a stylesheet (expected UTF-8 text)`);
    return null;
  }
  return Object.freeze({ file, bytes, hash: shortHash(bytes) });
}

export const brandSettings = defineSettings({
  name: 'brand',
  variables: [
    {
      name: 'BRAND_LOGO_FILE',
      default: '',
      meaning: 'a PNG or SVG file (at most 512 KiB) shown at the top of every page instead of APP_NAME (unset: the name)',
    },
    {
      name: 'BRAND_COLOR',
      default: '',
      meaning: "the pages' header, button and link colour as #rrggbb, with at least 4.5:1 contrast with white text (unset: the pages' own blue)",
    },
    { name: 'BRAND_CSS_FILE', default: '', meaning: 'an extra stylesheet (at most 256 KiB) every page loads after its own (unset: none)' },
  ],
  read: (reader): BrandSettings => ({
    brand: Object.freeze({ color: readColor(reader), logo: readLogo(reader), css: readCss(reader) }),
  }),
});
