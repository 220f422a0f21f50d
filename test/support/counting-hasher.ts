/** The real bcrypt hasher (lowest cost, its own pool), counting the passwords it hashes and checks. */
import { createHashPool } from '../../src/credentials/hash-pool.js';
import { createBcryptHasher, type PasswordHasher } from '../../src/credentials/hasher.js';

export interface CountingHasher {
  hasher: PasswordHasher;
  hashes(): number;
  verifications(): number;
  close(): Promise<void>;
}

export function createCountingHasher(options: { poolSize?: number } = {}): CountingHasher {
  const pool = createHashPool(options.poolSize === undefined ? {} : { size: options.poolSize });
  const real = createBcryptHasher({ rounds: 4, pool });
  let hashes = 0;
  let verifications = 0;
  return {
    hasher: {
      hash: (password) => ((hashes += 1), real.hash(password)),
      verify: (password, hash) => ((verifications += 1), real.verify(password, hash)),
      needsRehash: (hash) => real.needsRehash(hash),
    },
    hashes: () => hashes,
    verifications: () => verifications,
    close: () => pool.close(),
  };
}
