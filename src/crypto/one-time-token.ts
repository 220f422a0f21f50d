/**
 * @module One-time tokens `<id>.<secret>` (DESIGN §5). `id` (16 random bytes) selects the row,
 * so checking a token costs one primary-key lookup and one comparison however many tokens are
 * outstanding — never a scan of every hash. `secret` is 32 random bytes (SPEC §2); only a hash of
 * it is stored. Both are base64url without padding, so the token is safe in a URL.
 */
import { randomBase64url, type RandomReader } from '../random.js';

const ID_BYTES = 16;
const SECRET_BYTES = 32;
// base64url of 16 and 32 bytes without padding: 22 and 43 characters.
const TOKEN_PATTERN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

export interface OneTimeToken {
  id: string;
  secret: string;
  /** What the user receives: `<id>.<secret>`. */
  token: string;
}

export function createOneTimeToken(random: RandomReader): OneTimeToken {
  const id = randomBase64url(random, ID_BYTES);
  const secret = randomBase64url(random, SECRET_BYTES);
  return { id, secret, token: `${id}.${secret}` };
}

/**
 * The parts of a well-formed token; null for anything else (never throws). A token of any other
 * length, however long, is just a wrong token (`invalid_token`), not a malformed request: the
 * answer says nothing about what a token looks like. The body limit (16 KiB) bounds the work.
 */
export function parseOneTimeToken(token: string): { id: string; secret: string } | null {
  const match = TOKEN_PATTERN.exec(token);
  return match?.[1] && match[2] ? { id: match[1], secret: match[2] } : null;
}
