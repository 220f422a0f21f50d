/**
 * @module Password hashes brought in from another system: which formats are read, how each is
 * stored in `users.password_hash`, and how it goes back out on export.
 *
 * Storage: Gatehouse's own hash (`gatehouse-v1`: bcrypt of base64(SHA-384(NFKC(password))), see
 * hasher.ts) is a bare `$2b$…` string and stays one. Every imported hash is stored as
 * `imported:<algorithm>:<hash>` — the prefix can never begin a bcrypt hash, so the hasher knows not
 * to pre-hash the password and to verify it the way its own system did (in the hashing pool,
 * imported/verifier-source.ts), then to rehash it at the first sign-in. Firebase's scrypt keeps
 * its parameters beside the hash: `imported:firebase-scrypt:<rounds>$<memCost>$<saltSeparator>$
 * <salt>$<signerKey>$<hash>` (base64 never contains `$`).
 *
 * Bounds: one login must not eat the machine, so a hash whose parameters exceed these is refused
 * at import (its user resets the password instead):
 * - bcrypt cost ≤ 15;
 * - argon2 memory ≤ 256 MiB (m ≤ 262144 KiB), passes t ≤ 10, lanes p ≤ 16;
 * - scrypt (and Firebase's) N ≤ 2^20, 128·N·r ≤ 256 MiB, r ≤ 32, p ≤ 16;
 * - PBKDF2 iterations ≤ 10,000,000;
 * - phpass ≤ 2^18 MD5 rounds; SHA-crypt rounds ≤ 1,000,000.
 * Unsalted fast hashes (plain MD5, SHA-1, SHA-256, SHA-512) are refused: anyone holding a leaked
 * copy of them already has most passwords, and nothing done at sign-in can make them safe.
 */

/** The `password` field of an import line: { algorithm, hash, ...params } (Firebase: hash, salt, signerKey, saltSeparator, rounds, memCost). */
export interface ImportedPassword {
  algorithm: string;
  hash: string;
  [param: string]: unknown;
}

export type EncodeResult = { ok: true; passwordHash: string } | { ok: false; error: string };

/** What every imported hash stored in `users.password_hash` starts with. */
export const IMPORTED_PREFIX = 'imported:';

export const IMPORT_BOUNDS = {
  bcryptCost: 15,
  argon2MemoryKiB: 262_144,
  argon2Passes: 10,
  argon2Lanes: 16,
  scryptLog2N: 20,
  scryptMemoryBytes: 256 * 1024 * 1024,
  scryptR: 32,
  scryptP: 16,
  pbkdf2Iterations: 10_000_000,
  phpassLog2Rounds: 18,
  shaCryptRounds: 1_000_000,
} as const;

const UNSALTED = new Set(['md5', 'sha1', 'sha-1', 'sha256', 'sha-256', 'sha512', 'sha-512', 'plain', 'plaintext']);
const B64 = '[A-Za-z0-9+/]';
const AB64 = '[A-Za-z0-9+/.]';
const CRYPT64 = '[./A-Za-z0-9]';
const BCRYPT = new RegExp(`^\\$2([aby])\\$(\\d{2})\\$${CRYPT64}{53}$`);
const ARGON2 = new RegExp(`^\\$(argon2id|argon2i)\\$(?:v=(?:16|19)\\$)?m=(\\d{1,9}),t=(\\d{1,9}),p=(\\d{1,9})\\$${B64}{11,}\\$${B64}{16,}$`);
const SCRYPT = new RegExp(`^\\$scrypt\\$ln=(\\d{1,2}),r=(\\d{1,4}),p=(\\d{1,4})\\$${AB64}+\\$${B64}{16,}$`);
const PBKDF2_PHC = new RegExp(`^\\$pbkdf2-(sha256|sha512)\\$i=(\\d{1,9})(?:,l=\\d{1,3})?\\$${B64}+\\$${B64}{16,}$`);
const PBKDF2_PASSLIB = new RegExp(`^\\$pbkdf2-(sha256|sha512)\\$(\\d{1,9})\\$${AB64}+\\$${AB64}{16,}$`);
const DJANGO = new RegExp(`^pbkdf2_sha256\\$(\\d{1,9})\\$[^$]{1,128}\\$${B64}{43}=$`);
const PHPASS = new RegExp(`^\\$[PH]\\$(${CRYPT64})${CRYPT64}{8}${CRYPT64}{22}$`);
const SHA_CRYPT = new RegExp(`^\\$([56])\\$(?:rounds=(\\d{1,10})\\$)?[^$:\\n]{0,16}\\$(${CRYPT64}+)$`);
const ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

const refuse = (error: string): EncodeResult => ({ ok: false, error });
const store = (algorithm: string, hash: string): EncodeResult => ({ ok: true, passwordHash: `${IMPORTED_PREFIX}${algorithm}:${hash}` });
const malformed = (algorithm: string, form: string): EncodeResult => refuse(`The ${algorithm} hash is malformed (expected ${form}).`);
const tooCostly = (what: string): EncodeResult => refuse(`The hash's ${what} exceeds what Gatehouse accepts; this user must reset the password.`);

function encodeBcrypt(algorithm: 'bcrypt' | 'gatehouse-v1', hash: string): EncodeResult {
  const match = BCRYPT.exec(hash);
  if (!match) return malformed(algorithm, '$2a$, $2b$ or $2y$ with a two-digit cost');
  const cost = Number(match[2]);
  if (cost < 4) return malformed(algorithm, 'a cost of at least 4');
  if (cost > IMPORT_BOUNDS.bcryptCost) return tooCostly(`bcrypt cost (${cost}, at most ${IMPORT_BOUNDS.bcryptCost})`);
  // $2y$ (PHP's name) is the same algorithm as $2b$; the bcrypt library reads $2a$ and $2b$.
  const normalized = match[1] === 'y' ? `$2b$${hash.slice(4)}` : hash;
  return algorithm === 'gatehouse-v1' ? { ok: true, passwordHash: normalized } : store('bcrypt', normalized);
}

function encodeArgon2(algorithm: string, hash: string): EncodeResult {
  const match = ARGON2.exec(hash);
  if (!match || match[1] !== algorithm) return malformed(algorithm, `PHC $${algorithm}$v=19$m=…,t=…,p=…$salt$hash`);
  const [memory, passes, lanes] = [Number(match[2]), Number(match[3]), Number(match[4])];
  if (memory > IMPORT_BOUNDS.argon2MemoryKiB) return tooCostly(`argon2 memory (m=${memory} KiB, at most ${IMPORT_BOUNDS.argon2MemoryKiB})`);
  if (passes < 1 || passes > IMPORT_BOUNDS.argon2Passes) return tooCostly(`argon2 passes (t=${passes}, 1 to ${IMPORT_BOUNDS.argon2Passes})`);
  if (lanes < 1 || lanes > IMPORT_BOUNDS.argon2Lanes) return tooCostly(`argon2 lanes (p=${lanes}, 1 to ${IMPORT_BOUNDS.argon2Lanes})`);
  if (memory < 8 * lanes) return malformed(algorithm, 'm of at least 8·p KiB');
  return store(algorithm, hash);
}

/** N, r, p of scrypt within the bounds, or why not. */
function scryptCostError(log2N: number, r: number, p: number): string | null {
  if (log2N < 1 || r < 1 || p < 1) return 'positive parameters';
  if (log2N > IMPORT_BOUNDS.scryptLog2N) return `scrypt N (2^${log2N}, at most 2^${IMPORT_BOUNDS.scryptLog2N})`;
  if (r > IMPORT_BOUNDS.scryptR || p > IMPORT_BOUNDS.scryptP) return `scrypt r or p (r ≤ ${IMPORT_BOUNDS.scryptR}, p ≤ ${IMPORT_BOUNDS.scryptP})`;
  if (128 * 2 ** log2N * r > IMPORT_BOUNDS.scryptMemoryBytes) return 'scrypt memory (128·N·r, at most 256 MiB)';
  return null;
}

function encodeScrypt(hash: string): EncodeResult {
  const match = SCRYPT.exec(hash);
  if (!match) return malformed('scrypt', 'PHC $scrypt$ln=…,r=…,p=…$salt$hash');
  const error = scryptCostError(Number(match[1]), Number(match[2]), Number(match[3]));
  if (error === 'positive parameters') return malformed('scrypt', error);
  return error === null ? store('scrypt', hash) : tooCostly(error);
}

function encodePbkdf2(algorithm: string, hash: string): EncodeResult {
  const django = algorithm === 'django-pbkdf2-sha256';
  const match = django ? DJANGO.exec(hash) : (PBKDF2_PHC.exec(hash) ?? PBKDF2_PASSLIB.exec(hash));
  if (!match || (!django && `pbkdf2-${match[1]}` !== algorithm)) {
    return django
      ? malformed(algorithm, 'pbkdf2_sha256$<iterations>$<salt>$<base64 hash>')
      : malformed(algorithm, `$${algorithm}$i=<iterations>$salt$hash or $${algorithm}$<rounds>$salt$hash`);
  }
  const iterations = Number(django ? match[1] : match[2]);
  if (iterations < 1) return malformed(algorithm, 'at least one iteration');
  if (iterations > IMPORT_BOUNDS.pbkdf2Iterations) return tooCostly(`PBKDF2 iterations (${iterations}, at most ${IMPORT_BOUNDS.pbkdf2Iterations})`);
  return store(algorithm, hash);
}

function encodePhpass(hash: string): EncodeResult {
  const match = PHPASS.exec(hash);
  if (!match) return malformed('phpass', '$P$ or $H$, a cost character, 8 salt and 22 hash characters');
  const log2 = ITOA64.indexOf(match[1] ?? '');
  if (log2 < 7 || log2 > 30) return malformed('phpass', 'a cost character between 5 and S');
  if (log2 > IMPORT_BOUNDS.phpassLog2Rounds) return tooCostly(`phpass rounds (2^${log2}, at most 2^${IMPORT_BOUNDS.phpassLog2Rounds})`);
  return store('phpass', hash);
}

function encodeShaCrypt(algorithm: string, hash: string): EncodeResult {
  const match = SHA_CRYPT.exec(hash);
  const length = algorithm === 'sha256-crypt' ? 43 : 86;
  if (!match || match[1] !== (algorithm === 'sha256-crypt' ? '5' : '6') || match[3]?.length !== length) {
    return malformed(algorithm, `$${algorithm === 'sha256-crypt' ? 5 : 6}$[rounds=N$]salt$ and ${length} hash characters`);
  }
  if (Number(match[2] ?? 5000) > IMPORT_BOUNDS.shaCryptRounds) return tooCostly(`SHA-crypt rounds (${match[2]}, at most ${IMPORT_BOUNDS.shaCryptRounds})`);
  return store(algorithm, hash);
}

const FIREBASE_FIELDS = ['hash', 'salt', 'signerKey', 'saltSeparator'] as const;

function encodeFirebase(input: Record<string, unknown>): EncodeResult {
  const form = 'base64 hash, salt, signerKey and saltSeparator, and whole rounds and memCost';
  const fields: string[] = [];
  for (const field of FIREBASE_FIELDS) {
    const value = input[field];
    // Firebase's saltSeparator is commonly "Bw==" and may legitimately be empty.
    if (typeof value !== 'string' || value.length > 256 || (value !== '' && !BASE64.test(value)) || (value === '' && field !== 'saltSeparator')) {
      return malformed('firebase-scrypt', form);
    }
    fields.push(value);
  }
  const { rounds, memCost } = input;
  if (!Number.isInteger(rounds) || !Number.isInteger(memCost)) return malformed('firebase-scrypt', form);
  const error = scryptCostError(memCost as number, rounds as number, 1);
  if (error === 'positive parameters') return malformed('firebase-scrypt', form);
  if (error !== null) return tooCostly(error);
  const [hash, salt, signerKey, saltSeparator] = fields;
  return store('firebase-scrypt', [rounds, memCost, saltSeparator, salt, signerKey, hash].join('$'));
}

function encodeFormat(algorithm: string, hash: string, input: Record<string, unknown>): EncodeResult {
  switch (algorithm) {
    case 'bcrypt':
    case 'gatehouse-v1':
      return encodeBcrypt(algorithm, hash);
    case 'argon2id':
    case 'argon2i':
      return encodeArgon2(algorithm, hash);
    case 'scrypt':
      return encodeScrypt(hash);
    case 'pbkdf2-sha256':
    case 'pbkdf2-sha512':
    case 'django-pbkdf2-sha256':
      return encodePbkdf2(algorithm, hash);
    case 'firebase-scrypt':
      return encodeFirebase(input);
    case 'phpass':
      return encodePhpass(hash);
    case 'sha256-crypt':
    case 'sha512-crypt':
      return encodeShaCrypt(algorithm, hash);
    default:
      return refuse(`Unsupported password algorithm "${algorithm.slice(0, 40)}".`);
  }
}

/** Validates one import line's password and returns what users.password_hash stores, or why it is refused (a short reason for the per-line report; never echoes the hash). */
export function encodeImportedPassword(input: unknown): EncodeResult {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return refuse('password must be an object { algorithm, hash, … }.');
  const record = input as Record<string, unknown>;
  const { algorithm, hash } = record;
  if (typeof algorithm !== 'string' || algorithm === '') return refuse('password.algorithm must be a string.');
  if (typeof hash !== 'string' || hash === '') return refuse('password.hash must be a non-empty string.');
  if (hash.length > 512) return refuse('password.hash is too long (at most 512 characters).');
  if (UNSALTED.has(algorithm.toLowerCase())) {
    return refuse(`An unsalted ${algorithm} hash is refused: it is too fast to guess and cannot be made safe; this user must reset the password.`);
  }
  return encodeFormat(algorithm, hash, record);
}

/** True when `passwordHash` (as stored) is an imported one, verified the way its own system did. */
export function isImportedHash(passwordHash: string): boolean {
  return passwordHash.startsWith(IMPORTED_PREFIX);
}

/** The inverse for export: Gatehouse's own hashes come out as { algorithm: 'gatehouse-v1', hash }, imported ones as they came in. */
export function exportPasswordHash(passwordHash: string): ImportedPassword {
  if (!isImportedHash(passwordHash)) return { algorithm: 'gatehouse-v1', hash: passwordHash };
  const rest = passwordHash.slice(IMPORTED_PREFIX.length);
  const colon = rest.indexOf(':');
  const algorithm = rest.slice(0, colon);
  const hash = rest.slice(colon + 1);
  if (algorithm !== 'firebase-scrypt') return { algorithm, hash };
  const [rounds, memCost, saltSeparator, salt, signerKey, firebaseHash] = hash.split('$');
  return { algorithm, hash: firebaseHash ?? '', salt, signerKey, saltSeparator, rounds: Number(rounds), memCost: Number(memCost) };
}
