/**
 * @module Common passwords are refused (OWASP ASVS 5.0 6.2.4, NIST SP 800-63B 3.1.1.2): the
 * 49,000 most common passwords of zxcvbn-ts's shipped list (`@zxcvbn-ts/language-common`, from
 * real breach corpora), compared after NFKC and case-folding.
 *
 * Composition rules push people to decorate a common word: `Password1!`, `Welcome2024!`. Those
 * pass the rules and are exactly what spraying lists try first, so the password is also compared
 * with its base: trailing symbols removed (`password1`), then trailing digits and symbols removed
 * (`password`). The leading capital the rules ask for is gone with case-folding. Context words
 * count too: the application's name and the local part of the person's email.
 *
 * The list is read on first use, not at start: the start-up time of DESIGN §8 stays as it was,
 * and a server that never registers anyone never loads it.
 */
import { readFileSync } from 'node:fs';
import { validationError } from '../errors.js';
import { requireOptional } from '../lazy-require.js';

const LIST_MODULE = '@zxcvbn-ts/language-common/dist/passwords.json.cjs';
/** Written next to the compiled module by `npm run build` (scripts/build-common-passwords.mjs). */
export const LIST_FILE = new URL('./common-passwords.txt', import.meta.url);
/** A base shorter than this is not compared: `Xy99999999!` is not refused for being `xy`. */
const MIN_BASE_LENGTH = 4;

/**
 * The folded list as one string, `\n`-delimited with a `\n` at each end, so membership is one
 * `includes` of `\n<base>\n`. One 388 KB string instead of a Set of 49,000: decompressing the
 * package's list and holding it as a Set grew the server's resident memory by 15–18 MB (most of it
 * garbage V8 keeps the pages of), against under 1 MB for this; a look-up scans it in well under a
 * millisecond, once per new password (measured: docs/performance.md).
 */
let commonPasswords: string | null = null;

/** The package's list folded, deduplicated and sorted, in the form `isCommonPassword` reads. */
export function foldedCommonPasswordList(): string {
  const loaded: unknown = requireOptional(LIST_MODULE);
  const list: unknown = (loaded as { default?: unknown }).default ?? loaded;
  if (!Array.isArray(list) || !list.every((entry) => typeof entry === 'string')) {
    throw new Error(`${LIST_MODULE} is not a list of passwords`);
  }
  const folded = [...new Set(list.map(fold))].filter((entry) => entry !== '' && !entry.includes('\n')).sort();
  return `\n${folded.join('\n')}\n`;
}

function loadList(): string {
  if (commonPasswords !== null) return commonPasswords;
  try {
    commonPasswords = readFileSync(LIST_FILE, 'utf8');
  } catch {
    // Running from the sources (the tests): build the same text from the package.
    commonPasswords = foldedCommonPasswordList();
  }
  return commonPasswords;
}

function fold(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/** The password and its bases, folded: `Welcome2024!` → `welcome2024!`, `welcome2024`, `welcome`. */
export function passwordBases(password: string): string[] {
  const folded = fold(password);
  const withoutSymbols = folded.replace(/[^\p{L}\p{N}]+$/u, '');
  const withoutDigitsAndSymbols = folded.replace(/[^\p{L}]+$/u, '');
  const bases = [folded, withoutSymbols];
  if ([...withoutDigitsAndSymbols].length >= MIN_BASE_LENGTH) bases.push(withoutDigitsAndSymbols);
  return [...new Set(bases)];
}

/**
 * True when the password, or its base, is a common password or one of `contextWords` (the
 * application's name, the email's local part: words an attacker who targets this account tries).
 */
export function isCommonPassword(password: string, contextWords: readonly string[] = []): boolean {
  if (isMadeOfContextWords(password, contextWords)) return true;
  const list = loadList();
  // A base holding a line break would match across two entries of the list: no entry holds one.
  return passwordBases(password).some((base) => !base.includes('\n') && list.includes(`\n${base}\n`));
}

/** True when the password, or its base, is one of `contextWords`; the list is not read. */
function isMadeOfContextWords(password: string, contextWords: readonly string[]): boolean {
  const context = new Set(contextWords.map(fold).filter((word) => [...word].length >= MIN_BASE_LENGTH));
  return context.size > 0 && passwordBases(password).some((base) => context.has(base));
}

export const COMMON_PASSWORD_MESSAGE = 'is too common: it is on a list of passwords that attackers try first; choose another';

/** The words an attacker who targets this account on this service tries: its name, the email's local part. */
export function contextWordsFor(appName: string, email: string | null): string[] {
  const localPart = email?.split('@')[0];
  return localPart === undefined ? [appName] : [appName, localPart];
}

/**
 * Refuses a password made of the context words, as the same issue on `password`. The list itself
 * was already checked by the body's schema (`newPasswordSchema`), which knows no context: this
 * is the part only a flow, knowing the email, can add, and it does not scan the list again.
 */
export function assertNotContextPassword(password: string, contextWords: readonly string[], path = 'password'): void {
  if (isMadeOfContextWords(password, contextWords)) throw validationError([{ path, message: COMMON_PASSWORD_MESSAGE }]);
}
