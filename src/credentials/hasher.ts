/**
 * @module Password hashing: bcrypt on the dedicated hashing pool (never on the event loop,
 * never on libuv's shared thread pool).
 *
 * bcrypt reads at most 72 bytes of its input and silently ignores the rest, so a 128-character
 * password (up to 512 UTF-8 bytes) would lose most of itself. Every password is therefore
 * NFKC-normalised, hashed with SHA-384 and base64-encoded (64 ASCII characters, no NUL byte)
 * before bcrypt sees it: every byte of the password counts. Dropbox described the same
 * construction with SHA-512 ("How Dropbox securely stores your passwords", 2016).
 */
import { createHash } from 'node:crypto';
import type { HashPool } from './hash-pool.js';
import { isImportedHash } from './imported-hashes.js';
import { normalizePassword } from './rules.js';

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /**
   * True when `password` matches `passwordHash`. With a null hash (unknown email, or a user
   * without a password) it compares against a hash of the same cost and returns false, so both
   * cases take the time of a wrong password and reveal nothing.
   */
  verify(password: string, passwordHash: string | null): Promise<boolean>;
  /**
   * True when `passwordHash` was made at another cost than this hasher's (BCRYPT_ROUNDS changed
   * since), or was imported from another system: the first sign-in then stores Gatehouse's own.
   */
  needsRehash(passwordHash: string): boolean;
}

/** The cost a bcrypt hash was made with (`$2b$10$…` → 10); null for anything else. */
export function bcryptCost(hash: string): number | null {
  const match = /^\$2[aby]\$(\d{2})\$/.exec(hash);
  return match ? Number(match[1]) : null;
}

function prehash(password: string): string {
  return createHash('sha384').update(normalizePassword(password), 'utf8').digest('base64');
}

/**
 * Hashes secrets with bcrypt at a fixed cost, comparing against a dummy hash of that cost when
 * there is nothing to compare with (so a miss costs what a hit costs).
 */
export function createSecretHasher(pool: HashPool, rounds: number): PasswordHasher & { dummyHash: Promise<string> } {
  // A real hash of a random value at the configured cost, computed once in the background.
  const dummyHash = pool.hash(createHash('sha256').update(String(Math.random())).digest('base64'), rounds);
  dummyHash.catch(() => {});
  return {
    dummyHash,
    hash: (secret) => pool.hash(secret, rounds),
    needsRehash: (hash) => bcryptCost(hash) !== rounds,
    async verify(secret, hash) {
      if (hash === null) {
        await pool.compare(secret, await dummyHash);
        return false;
      }
      return pool.compare(secret, hash);
    },
  };
}

export function createBcryptHasher(options: { rounds: number; pool: HashPool }): PasswordHasher {
  const secrets = createSecretHasher(options.pool, options.rounds);
  return {
    hash: (password) => secrets.hash(prehash(password)),
    async verify(password, passwordHash) {
      // An imported hash was made from the password itself, the way its own system hashed it; it
      // is checked in the hashing pool too, and never answers sooner than a compare at our cost.
      if (passwordHash !== null && isImportedHash(passwordHash)) return options.pool.verifyImported(password, passwordHash, await secrets.dummyHash);
      return secrets.verify(prehash(password), passwordHash);
    },
    needsRehash: (passwordHash) => isImportedHash(passwordHash) || secrets.needsRehash(passwordHash),
  };
}
