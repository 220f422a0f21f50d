// Shared by the converters in this folder: read an export, write Gatehouse import lines.
// Plain Node (no dependencies), so a converter runs wherever the export lands.
import fs from 'node:fs';

/** The whole of a file, or of standard input for `-`. */
export function readText(file) {
  return fs.readFileSync(file === '-' ? 0 : file, 'utf8');
}

/** A JSON document, or NDJSON (one object a line) when the file is not one document. */
export function readJsonOrLines(file) {
  const text = readText(file).replace(/^\uFEFF/, '');
  try {
    return JSON.parse(text);
  } catch {
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line, index) => {
        try {
          return JSON.parse(line);
        } catch {
          throw new Error(`${file}: line ${index + 1} is not JSON`);
        }
      });
  }
}

/** One import line; fields left undefined are omitted, so the import applies its defaults. */
export function emit(user) {
  process.stdout.write(JSON.stringify(user) + '\n');
}

/** Problems go to stderr so that stdout stays a clean NDJSON file. */
export function warn(message) {
  process.stderr.write(`warning: ${message}\n`);
}

/** An ISO 8601 time from epoch milliseconds (number or digit string) or a date string; undefined when unreadable. */
export function isoTime(value) {
  if (value === null || value === undefined || value === '') return undefined;
  const date = typeof value === 'number' || /^\d+$/.test(String(value)) ? new Date(Number(value)) : new Date(String(value));
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** Standard base64 without padding: the PHC string format's encoding of salts and hashes. */
export function phcBase64(bytes) {
  return Buffer.from(bytes).toString('base64').replace(/=+$/, '');
}

/**
 * Gatehouse names a sign-in provider by its own id (`github`, or the id of an OpenID Connect
 * provider in OIDC_PROVIDERS). The names other systems use for the same providers, mapped; any
 * other name is kept (other characters turned into _), so configure a provider under that id
 * or rename it with --provider.
 */
const PROVIDER_NAMES = {
  'github.com': 'github',
  'google.com': 'google',
  'google-oauth2': 'google',
  'apple.com': 'apple',
  'microsoft.com': 'microsoft',
  windowslive: 'microsoft',
  'facebook.com': 'facebook',
  'gitlab.com': 'gitlab',
};

export function providerName(name, renames = {}) {
  const mapped = PROVIDER_NAMES[name] ?? name;
  // A Gatehouse provider id is lower-case letters, digits and underscores.
  return renames[name] ?? renames[mapped] ?? mapped.toLowerCase().replace(/[^a-z0-9_]/g, '_');
}

/** `--provider from=to` options (repeatable) as a map. */
export function providerRenames(values = []) {
  return Object.fromEntries(
    values.map((value) => {
      const at = value.indexOf('=');
      if (at <= 0) throw new Error(`--provider takes from=to, not ${value}`);
      return [value.slice(0, at), value.slice(at + 1)];
    }),
  );
}

/** Runs a converter: a thrown error is a message and exit code 2 (bad arguments or input), never a stack trace. */
export function run(main) {
  try {
    main();
  } catch (error) {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
}
