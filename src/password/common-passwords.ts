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
 * The list is read on first use (about 70 ms and a few MB), not at start: the start-up time of
 * DESIGN §8 stays as it was, and a server that never registers anyone never loads it.
 */
import { validationError } from '../errors.js';
import { requireOptional } from '../lazy-require.js';

const LIST_MODULE = '@zxcvbn-ts/language-common/dist/passwords.json.cjs';
/** A base shorter than this is not compared: `Xy99999999!` is not refused for being `xy`. */
const MIN_BASE_LENGTH = 4;

let commonPasswords: ReadonlySet<string> | null = null;

function loadList(): ReadonlySet<string> {
  if (commonPasswords !== null) return commonPasswords;
  const loaded: unknown = requireOptional(LIST_MODULE);
  const list: unknown = (loaded as { default?: unknown }).default ?? loaded;
  if (!Array.isArray(list) || !list.every((entry) => typeof entry === 'string')) {
    throw new Error(`${LIST_MODULE} is not a list of passwords`);
  }
  commonPasswords = new Set(list.map(fold));
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
  const list = loadList();
  const context = new Set(contextWords.map(fold).filter((word) => [...word].length >= MIN_BASE_LENGTH));
  return passwordBases(password).some((base) => list.has(base) || context.has(base));
}

export const COMMON_PASSWORD_MESSAGE = 'is too common: it is on a list of passwords that attackers try first; choose another';

/** The words an attacker who targets this account on this service tries: its name, the email's local part. */
export function contextWordsFor(appName: string, email: string | null): string[] {
  const localPart = email?.split('@')[0];
  return localPart === undefined ? [appName] : [appName, localPart];
}

/** Refuses a common password, or one made of the context words, as its own issue on `password`. */
export function assertNotCommonPassword(password: string, contextWords: readonly string[]): void {
  if (isCommonPassword(password, contextWords)) throw validationError([{ path: 'password', message: COMMON_PASSWORD_MESSAGE }]);
}
