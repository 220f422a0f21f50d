/**
 * @module Email template overrides: EMAIL_TEMPLATES_DIR holds files that replace a built-in
 * email's subject, text or HTML in one language, read and checked once at start.
 *
 * Names: `<kind>.<lang>.subject.txt`, `<kind>.<lang>.txt`, `<kind>.<lang>.html`, for the kinds
 * and languages the caller names (a file of any other name stops the start: a typo would
 * otherwise leave the built-in email in place without a word).
 *
 * The language is Mustache, kept logic-less: only `{{name}}` placeholders, each one of the
 * variables its kind offers, and `{{! comments }}`. Sections, inverted sections, partials and
 * delimiter changes are refused, so a template can neither loop, nor test, nor pull another file
 * in. In HTML every value is escaped (the same `escapeHtml` as the pages), and the unescaped forms
 * `{{{name}}}` and `{{&name}}` are refused there: a value (a new email address) may come from the
 * person the email is about. In text and subject nothing is escaped (there is no markup), and
 * the three forms mean the same.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import Mustache from 'mustache';
import { ConfigError } from '../config-error.js';
import { escapeHtml } from '../escape-html.js';

export type TemplatePart = 'subject' | 'text' | 'html';

export interface TemplateOverrides {
  /** The email's part rendered from its override with `vars`; null: no override, use the built-in. */
  render(kind: string, lang: string, part: TemplatePart, vars: Readonly<Record<string, string>>): string | null;
  /** How many files were read (for the start banner and tests). */
  readonly count: number;
}

export const MAX_TEMPLATE_BYTES = 64 * 1024;

/** What a file's name says, or why it says nothing usable. */
type ParsedName = { kind: string; lang: string; part: TemplatePart } | { problem: string };

const TEXT_TAGS = new Set(['name', '&', '!']);
const HTML_TAGS = new Set(['name', '!']);
const REFUSED_TAGS: Readonly<Record<string, string>> = {
  '#': 'sections ({{#…}}) are not supported: templates have no logic',
  '^': 'inverted sections ({{^…}}) are not supported: templates have no logic',
  '>': 'partials ({{>…}}) are not supported',
  '=': 'changing the delimiters ({{=…=}}) is not supported',
  '&': 'unescaped placeholders ({{{…}}} and {{&…}}) are refused in HTML: every value is escaped there; write {{name}}',
};

function parseName(name: string, kinds: Readonly<Record<string, readonly string[]>>, languages: readonly string[]): ParsedName {
  const match = /^([^.]+)\.([^.]+)\.(subject\.txt|txt|html)$/.exec(name);
  if (match === null) return { problem: 'expected a name <kind>.<lang>.txt, <kind>.<lang>.html or <kind>.<lang>.subject.txt' };
  const [, kind = '', lang = '', extension] = match;
  if (!Object.hasOwn(kinds, kind)) return { problem: `unknown kind "${kind}"; the kinds are ${Object.keys(kinds).join(', ')}` };
  if (!languages.includes(lang)) return { problem: `unknown language "${lang}"; the languages are ${languages.join(', ')}` };
  return { kind, lang, part: extension === 'subject.txt' ? 'subject' : extension === 'html' ? 'html' : 'text' };
}

/** The file's text, or a problem: over the size, not UTF-8. */
function readTemplate(file: string): { text: string } | { problem: string } {
  let bytes: Uint8Array;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) return { problem: 'not a file' };
    if (stat.size > MAX_TEMPLATE_BYTES) return { problem: `${Math.ceil(stat.size / 1024)} KiB; a template may be at most ${MAX_TEMPLATE_BYTES / 1024} KiB` };
    bytes = readFileSync(file);
  } catch (error) {
    const { code } = error as { code?: string };
    return { problem: `cannot read it (${code ?? String(error)})` };
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { problem: 'not UTF-8 text' };
  }
}

/** Every problem of one template's tags against its kind's variables; none: it may be rendered. */
function checkTags(template: string, part: TemplatePart, variables: readonly string[]): string[] {
  let tokens: readonly (readonly unknown[])[];
  try {
    tokens = Mustache.parse(template);
  } catch (error) {
    return [`not a valid template: ${(error as Error).message}`];
  }
  const allowed = part === 'html' ? HTML_TAGS : TEXT_TAGS;
  const problems: string[] = [];
  for (const [type, value, start, end] of tokens) {
    if (type === 'text') continue;
    const tag = template.slice(start as number, end as number);
    if (!allowed.has(type as string)) problems.push(`${tag}: ${REFUSED_TAGS[type as string] ?? 'not supported'}`);
    else if (type !== '!' && !variables.includes(value as string)) {
      problems.push(`unknown placeholder ${tag}; this kind offers ${variables.map((name) => `{{${name}}}`).join(', ')}`);
    }
  }
  if (part === 'subject' && /[\r\n]/.test(template.trim())) problems.push('a subject is one line');
  return problems;
}

/** The names in the folder, hidden ones left out: those are an editor's or a system's (.DS_Store, swap files). */
function templateFileNames(dir: string): string[] {
  let isFolder: boolean;
  try {
    isFolder = statSync(dir).isDirectory();
  } catch (error) {
    const { code } = error as { code?: string };
    throw new ConfigError([`EMAIL_TEMPLATES_DIR: cannot read ${dir}: ${code === 'ENOENT' ? 'no such folder' : String(error)}${code ? ` (${code})` : ''}`]);
  }
  if (!isFolder) throw new ConfigError([`EMAIL_TEMPLATES_DIR: ${dir} is not a folder`]);
  return readdirSync(dir)
    .filter((name) => !name.startsWith('.'))
    .sort();
}

/**
 * Reads every override in `dir` and checks it; throws a ConfigError naming each bad file and
 * what is wrong with it. `kinds`: each email kind and the variables its templates may use.
 */
export function loadTemplateOverrides(dir: string, kinds: Readonly<Record<string, readonly string[]>>, languages: readonly string[]): TemplateOverrides {
  const problems: string[] = [];
  const templates = new Map<string, string>();
  for (const name of templateFileNames(dir)) {
    const say = (problem: string): void => void problems.push(`EMAIL_TEMPLATES_DIR: ${path.join(dir, name)}: ${problem}`);
    const parsed = parseName(name, kinds, languages);
    if ('problem' in parsed) {
      say(parsed.problem);
      continue;
    }
    const read = readTemplate(path.join(dir, name));
    if ('problem' in read) {
      say(read.problem);
      continue;
    }
    const found = checkTags(read.text, parsed.part, kinds[parsed.kind] ?? []);
    for (const problem of found) say(problem);
    // A subject's file ends with a line break like any text file; the subject does not.
    if (found.length === 0) templates.set(`${parsed.kind}/${parsed.lang}/${parsed.part}`, parsed.part === 'subject' ? read.text.trim() : read.text);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    count: templates.size,
    render(kind, lang, part, vars) {
      const template = templates.get(`${kind}/${lang}/${part}`);
      if (template === undefined) return null;
      // Only the kind's own variables reach the template, as plain strings.
      const view = Object.fromEntries((kinds[kind] ?? []).map((name) => [name, vars[name] ?? '']));
      return Mustache.render(template, view, undefined, { escape: part === 'html' ? escapeHtml : (value: string) => value });
    },
  };
}
