/**
 * @module Text from outside (a provider's labels and error descriptions, an operator's search)
 * kept to one printable line: control characters — a terminal escape, a line break, a NUL byte,
 * which PostgreSQL refuses in text — are found or replaced.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex -- replacing control characters is the point
const CONTROL_CHARACTER_RUNS = /[\u0000-\u001f\u007f]+/g;

export function hasControlCharacter(text: string): boolean {
  return CONTROL_CHARACTER.test(text);
}

/** Each run of control characters as one space, trimmed, at most `maxChars` characters. */
export function oneLine(text: string, maxChars: number): string {
  return text.replace(CONTROL_CHARACTER_RUNS, ' ').trim().slice(0, maxChars);
}
