/**
 * @module Password hashing with a native bcrypt that runs on the libuv thread pool, never on
 * the event loop.
 *
 * bcrypt reads at most 72 bytes of its input and silently ignores the rest, so a 128-character
 * password (up to 512 UTF-8 bytes) would lose most of itself. Every password is therefore
 * NFKC-normalised, hashed with SHA-384 and base64-encoded (64 ASCII characters, no NUL byte)
 * before bcrypt sees it: every byte of the password counts. The same construction is used by
 * Dropbox ("How Dropbox securely stores your passwords", 2016) with SHA-512.
 */
import { createHash } from 'node:crypto';
import bcrypt from 'bcrypt';
import { normalizePassword } from './rules.js';

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /**
   * True when `password` matches `passwordHash`. With a null hash (unknown email, or a user
   * without a password) it compares against a hash of the same cost and returns false, so both
   * cases take the time of a wrong password and reveal nothing.
   */
  verify(password: string, passwordHash: string | null): Promise<boolean>;
}

function prehash(password: string): string {
  return createHash('sha384').update(normalizePassword(password), 'utf8').digest('base64');
}

export function createBcryptHasher(options: { rounds: number }): PasswordHasher {
  const { rounds } = options;
  // A real hash of a random value at the configured cost: comparing against it costs exactly
  // what comparing against a user's hash costs. Computed once, in the background, at start.
  const dummyHash = bcrypt.hash(createHash('sha256').update(String(Math.random())).digest('base64'), rounds);
  dummyHash.catch(() => {});

  return {
    hash: (password) => bcrypt.hash(prehash(password), rounds),

    async verify(password, passwordHash) {
      if (passwordHash === null) {
        await bcrypt.compare(prehash(password), await dummyHash);
        return false;
      }
      return bcrypt.compare(prehash(password), passwordHash);
    },
  };
}
