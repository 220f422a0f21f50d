/**
 * @module The optional breached-password check (PASSWORD_BREACH_CHECK=hibp, ASVS 5.0 6.2.12):
 * Have I Been Pwned's k-anonymity range API. Only the first 5 hex characters of the password's
 * SHA-1 leave the server; the answer lists every known suffix of that prefix, and the match is
 * made here. The request asks for padding, so the answer's size says nothing either.
 *
 * The check fails open: a slow, unreachable or garbled service lets the password through with a
 * warning in the log. A password check that an outage of a third party could turn into "nobody
 * can register" would be worse than one that sometimes misses a breached password, and the
 * shipped common-password list (common-passwords.ts) still applies.
 */
import { createHash } from 'node:crypto';
import { validationError } from '../errors.js';
import type { Logger } from '../logger.js';

/** Long enough for a healthy API from anywhere, short enough that a sign-up never hangs on it. */
export const BREACH_CHECK_TIMEOUT_MS = 2000;
/** A padded answer is about 40 KB; anything far larger is not the range API. */
const MAX_RANGE_BYTES = 1024 * 1024;

export const BREACHED_PASSWORD_MESSAGE = 'has appeared in a data breach: attackers try such passwords first; choose another';

export interface BreachCheck {
  /** True only when the service answered and lists the password; false otherwise (fail open). */
  isBreached(password: string): Promise<boolean>;
}

export interface HibpSettings {
  /** The range endpoint, ending in `/`; the 5-character prefix is appended. */
  rangeUrl: string;
  timeoutMs?: number;
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  logger: Logger;
}

export function createHibpBreachCheck(settings: HibpSettings): BreachCheck {
  const fetchRange = settings.fetch ?? ((input, init) => fetch(input, init));
  const timeoutMs = settings.timeoutMs ?? BREACH_CHECK_TIMEOUT_MS;
  return {
    async isBreached(password) {
      const digest = createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();
      const prefix = digest.slice(0, 5);
      const suffix = digest.slice(5);
      try {
        // One signal bounds the whole exchange, the body included: a server that sends headers
        // and then stalls costs no more than one that never answers.
        const signal = AbortSignal.timeout(timeoutMs);
        const response = await fetchRange(`${settings.rangeUrl}${prefix}`, {
          headers: { 'Add-Padding': 'true', Accept: 'text/plain' },
          redirect: 'error',
          signal,
        });
        if (!response.ok) throw new Error(`status ${response.status}`);
        const body = await readBounded(response);
        return rangeListsSuffix(body, suffix);
      } catch (error) {
        // The prefix is not a secret (it is what the API is sent) but there is no reason to log it.
        settings.logger.warn({ reason: describe(error) }, 'breached-password check unavailable; the password was accepted without it');
        return false;
      }
    },
  };
}

/** Lines `SUFFIX:COUNT`; padding lines have a count of 0 and never match. */
function rangeListsSuffix(body: string, suffix: string): boolean {
  for (const line of body.split('\n')) {
    const [lineSuffix, count] = line.trim().split(':');
    if (lineSuffix?.toUpperCase() === suffix) return Number(count) > 0;
  }
  return false;
}

async function readBounded(response: Response): Promise<string> {
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength;
    if (size > MAX_RANGE_BYTES) {
      await reader.cancel();
      throw new Error('answer too large');
    }
    chunks.push(read.value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describe(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return `no answer within the time bound`;
  return error instanceof Error ? error.message : String(error);
}

/** Refuses, as an issue on `password`, a new password the check finds in a breach; nothing when the check is off. */
export async function assertNotBreached(check: BreachCheck | null, password: string, path = 'password'): Promise<void> {
  if (check !== null && (await check.isBreached(password))) throw validationError([{ path, message: BREACHED_PASSWORD_MESSAGE }]);
}
