/**
 * @module How an imported hash is checked, as CommonJS source that runs inside the hashing pool's
 * worker threads (hash-pool.ts evaluates it there; a worker cannot load TypeScript, and none of
 * this may run on the event loop).
 *
 * A well-kept library does the work wherever one exists: bcrypt, @node-rs/argon2, and node:crypto
 * for scrypt and PBKDF2. Only the small remainder is written out here: Firebase's scrypt variant
 * (scrypt, then AES-256-CTR over the project's signer key), phpass (iterated MD5) and SHA-crypt
 * (Ulrich Drepper's "Unix crypt using SHA-256 and SHA-512"). Every comparison is constant-time.
 *
 * The source expects `bcrypt`, `crypto` and `argon2` in scope and defines `verifyImported(password,
 * stored)`, where `stored` is `imported:<algorithm>:<hash>` as imported-hashes.ts encodes it.
 */
export const IMPORTED_VERIFIER_SOURCE = String.raw`
const ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// Enough for the largest scrypt the import accepts (128·N·r ≤ 256 MiB) and its small extras.
const SCRYPT_MAXMEM = 288 * 1024 * 1024;

// Standard and passlib's "adapted" base64 ('.' for '+'), padded or not.
function fromBase64(text) {
  return Buffer.from(text.replace(/\./g, '+'), 'base64');
}

function sameBytes(a, b) {
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

function verifyScrypt(password, hash) {
  const [, , params, salt, expected] = hash.split('$');
  const values = Object.fromEntries(params.split(',').map((pair) => pair.split('=')));
  const wanted = fromBase64(expected);
  const options = { N: 2 ** Number(values.ln), r: Number(values.r), p: Number(values.p), maxmem: SCRYPT_MAXMEM };
  return sameBytes(crypto.scryptSync(password, fromBase64(salt), wanted.length, options), wanted);
}

// PHC ($pbkdf2-sha256$i=N[,l=L]$salt$hash) and passlib ($pbkdf2-sha256$N$salt$hash, adapted base64).
function verifyPbkdf2(password, hash) {
  const [, scheme, params, salt, expected] = hash.split('$');
  const iterations = Number(params.startsWith('i=') ? params.slice(2).split(',')[0] : params);
  const wanted = fromBase64(expected);
  const derived = crypto.pbkdf2Sync(password, fromBase64(salt), iterations, wanted.length, scheme.slice('pbkdf2-'.length));
  return sameBytes(derived, wanted);
}

// Django: pbkdf2_sha256$<iterations>$<salt, used as text>$<base64 hash>.
function verifyDjango(password, hash) {
  const [, iterations, salt, expected] = hash.split('$');
  const wanted = Buffer.from(expected, 'base64');
  return sameBytes(crypto.pbkdf2Sync(password, Buffer.from(salt, 'utf8'), Number(iterations), wanted.length, 'sha256'), wanted);
}

// Firebase: the key scrypt derives from (password, salt + separator) encrypts the project's signer
// key with AES-256-CTR and a zero IV; the result is the user's hash.
function verifyFirebase(password, stored) {
  const [rounds, memCost, separator, salt, signerKey, expected] = stored.split('$');
  const options = { N: 2 ** Number(memCost), r: Number(rounds), p: 1, maxmem: SCRYPT_MAXMEM };
  const key = crypto.scryptSync(Buffer.from(password, 'utf8'), Buffer.concat([fromBase64(salt), fromBase64(separator)]), 32, options);
  const cipher = crypto.createCipheriv('aes-256-ctr', key, Buffer.alloc(16, 0));
  const derived = Buffer.concat([cipher.update(fromBase64(signerKey)), cipher.final()]);
  return sameBytes(derived, fromBase64(expected));
}

// phpass's own little-endian base64 of 'count' bytes.
function phpassEncode64(input, count) {
  let output = '';
  let i = 0;
  do {
    let value = input[i++];
    output += ITOA64[value & 0x3f];
    if (i < count) value |= input[i] << 8;
    output += ITOA64[(value >> 6) & 0x3f];
    if (i++ >= count) break;
    if (i < count) value |= input[i] << 16;
    output += ITOA64[(value >> 12) & 0x3f];
    if (i++ >= count) break;
    output += ITOA64[(value >> 18) & 0x3f];
  } while (i < count);
  return output;
}

// phpass (WordPress, phpBB): MD5(salt + password), then 2^cost times MD5(previous + password).
function verifyPhpass(password, hash) {
  const rounds = 2 ** ITOA64.indexOf(hash[3]);
  const secret = Buffer.from(password, 'utf8');
  const md5 = (data) => crypto.createHash('md5').update(data).digest();
  let digest = md5(Buffer.concat([Buffer.from(hash.slice(4, 12), 'latin1'), secret]));
  for (let i = 0; i < rounds; i++) digest = md5(Buffer.concat([digest, secret]));
  return sameBytes(Buffer.from(hash.slice(0, 12) + phpassEncode64(digest, 16)), Buffer.from(hash));
}

// The byte order SHA-crypt's output encoding takes the final digest in, three bytes at a time.
const SHA256_ORDER = [0, 10, 20, 21, 1, 11, 12, 22, 2, 3, 13, 23, 24, 4, 14, 15, 25, 5, 6, 16, 26, 27, 7, 17, 18, 28, 8, 9, 19, 29];
const SHA512_ORDER = [
  0, 21, 42, 22, 43, 1, 44, 2, 23, 3, 24, 45, 25, 46, 4, 47, 5, 26, 6, 27, 48, 28, 49, 7, 50, 8, 29, 9, 30, 51, 31, 52, 10,
  53, 11, 32, 12, 33, 54, 34, 55, 13, 56, 14, 35, 15, 36, 57, 37, 58, 16, 59, 17, 38, 18, 39, 60, 40, 61, 19, 62, 20, 41,
];

function shaCryptEncode(digest, order) {
  let output = '';
  const put = (value, chars) => {
    for (let n = 0; n < chars; n++, value >>= 6) output += ITOA64[value & 0x3f];
  };
  for (let i = 0; i < order.length; i += 3) put((digest[order[i]] << 16) | (digest[order[i + 1]] << 8) | digest[order[i + 2]], 4);
  if (digest.length === 32) put((digest[31] << 8) | digest[30], 3);
  else put(digest[63], 2);
  return output;
}

// Repeats 'block' to exactly 'length' bytes.
function stretch(block, length) {
  const out = Buffer.alloc(length);
  if (block.length === 0) return out;
  for (let at = 0; at < length; at += block.length) block.copy(out, at, 0, Math.min(block.length, length - at));
  return out;
}

// Drepper's algorithm, steps 1–21.
function shaCryptDigest(algorithm, key, salt, rounds) {
  const H = (...parts) => {
    const h = crypto.createHash(algorithm);
    for (const part of parts) h.update(part);
    return h.digest();
  };
  const b = H(key, salt, key);
  const a = crypto.createHash(algorithm).update(key).update(salt).update(stretch(b, key.length));
  for (let n = key.length; n > 0; n >>= 1) a.update(n & 1 ? b : key);
  let c = a.digest();
  const p = stretch(H(stretch(key, key.length * key.length)), key.length);
  const s = stretch(H(stretch(salt, salt.length * (16 + c[0]))), salt.length);
  for (let r = 0; r < rounds; r++) {
    const h = crypto.createHash(algorithm).update(r & 1 ? p : c);
    if (r % 3) h.update(s);
    if (r % 7) h.update(p);
    c = h.update(r & 1 ? c : p).digest();
  }
  return c;
}

// $5$ / $6$, with an optional rounds=N$ (clamped to 1000..999999999 as the spec says).
function verifyShaCrypt(password, hash, algorithm) {
  const match = /^\$[56]\$(?:rounds=(\d+)\$)?([^$]*)\$(.*)$/.exec(hash);
  if (!match) return false;
  const rounds = match[1] === undefined ? 5000 : Math.min(999999999, Math.max(1000, Number(match[1])));
  const salt = Buffer.from(match[2].slice(0, 16), 'utf8');
  const digest = shaCryptDigest(algorithm, Buffer.from(password, 'utf8'), salt, rounds);
  const encoded = shaCryptEncode(digest, algorithm === 'sha256' ? SHA256_ORDER : SHA512_ORDER);
  return sameBytes(Buffer.from(encoded), Buffer.from(match[3]));
}

function verifyImported(password, stored) {
  const rest = stored.slice('imported:'.length);
  const colon = rest.indexOf(':');
  const hash = rest.slice(colon + 1);
  switch (rest.slice(0, colon)) {
    case 'bcrypt':
      return bcrypt.compareSync(password, hash);
    case 'argon2id':
    case 'argon2i':
      return argon2.verifySync(hash, password);
    case 'scrypt':
      return verifyScrypt(password, hash);
    case 'pbkdf2-sha256':
    case 'pbkdf2-sha512':
      return verifyPbkdf2(password, hash);
    case 'django-pbkdf2-sha256':
      return verifyDjango(password, hash);
    case 'firebase-scrypt':
      return verifyFirebase(password, hash);
    case 'phpass':
      return verifyPhpass(password, hash);
    case 'sha256-crypt':
      return verifyShaCrypt(password, hash, 'sha256');
    case 'sha512-crypt':
      return verifyShaCrypt(password, hash, 'sha512');
    default:
      return false;
  }
}
`;
