/**
 * Password hashes imported from other systems: each format checked against published
 * known-answer vectors (sources cited beside each), verified in the hashing pool's threads; the
 * refusals (unsalted, malformed, over the bounds); and over HTTP on each database, the first
 * sign-in replacing the imported hash with Gatehouse's own.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createHashPool, type HashPool } from '../src/credentials/hash-pool.js';
import { createBcryptHasher, type PasswordHasher } from '../src/credentials/hasher.js';
import { encodeImportedPassword, exportPasswordHash, type ImportedPassword } from '../src/credentials/imported-hashes.js';
import { cookieFrom, createTestGatehouse, describeEachDialect, STRONG_PASSWORD, type TestGatehouse } from './support/harness.js';

interface Vector {
  source: string;
  password: string;
  input: ImportedPassword;
}

const FIREBASE_PARAMS = {
  signerKey: 'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==',
  saltSeparator: 'Bw==',
  rounds: 8,
  memCost: 14,
};

const VECTORS: Vector[] = [
  // Openwall crypt_blowfish's wrapper.c test vectors (also PHP's crypt_blowfish.phpt).
  { source: 'Openwall crypt_blowfish', password: 'U*U', input: { algorithm: 'bcrypt', hash: '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW' } },
  // PHP's ext/standard/tests/password/password_hash.phpt ($2y$, read as $2b$).
  {
    source: 'PHP password_hash.phpt',
    password: 'rasmuslerdorf',
    input: { algorithm: 'bcrypt', hash: '$2y$07$usesomesillystringfore2uDLvp1Ii2e./U9C8sBjqp8I90dH6hi' },
  },
  // The reference implementation's test.c (P-H-C/phc-winner-argon2), version 0x13.
  {
    source: 'phc-winner-argon2 test.c',
    password: 'password',
    input: { algorithm: 'argon2i', hash: '$argon2i$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$wWKIMhR9lyDFvRz9YTZweHKfbftvj+qf+YFY4NeBbtA' },
  },
  {
    source: 'phc-winner-argon2 test.c',
    password: 'password',
    input: { algorithm: 'argon2id', hash: '$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc' },
  },
  // RFC 7914 section 12, second vector (P="password", S="NaCl", N=1024, r=8, p=16), PHC-encoded.
  {
    source: 'RFC 7914 §12',
    password: 'password',
    input: {
      algorithm: 'scrypt',
      hash: '$scrypt$ln=10,r=8,p=16$TmFDbA$/bq+HJ00cgB4VucZDQHp/nxq18vII3gw53N2Y0s3MWIurzDZLiKjiG/xCSedmDDaxyevuUqD7m2DYMvfoswGQA',
    },
  },
  // passlib's test suite (test_handlers_pbkdf2.py, pbkdf2_sha256_test known_correct_hashes).
  {
    source: 'passlib pbkdf2_sha256_test',
    password: 'password',
    input: { algorithm: 'pbkdf2-sha256', hash: '$pbkdf2-sha256$1212$4vjV83LKPjQzk31VI4E0Vw$hsYF68OiOUPdDZ1Fg.fJPeq1h/gXXY7acBp9/6c.tmQ' },
  },
  // RFC 7914 section 11 (PBKDF2-HMAC-SHA256, P="passwd", S="salt", c=1, dkLen=64), PHC i= form.
  {
    source: 'RFC 7914 §11',
    password: 'passwd',
    input: {
      algorithm: 'pbkdf2-sha256',
      hash: '$pbkdf2-sha256$i=1,l=64$c2FsdA$VawEblbjCJ/sFpHCJUS2BflBhSFt3gRl5oudV8INrLxJypzM8Xm2RZkWZLOdd+8xfHG4RbHjC9UJESBB06GXgw',
    },
  },
  // The widely published PBKDF2-HMAC-SHA512 vector (P="password", S="salt", c=1, dkLen=64), PHC i= form.
  {
    source: 'PBKDF2-HMAC-SHA512 test vectors (P=password, S=salt, c=1)',
    password: 'password',
    input: {
      algorithm: 'pbkdf2-sha512',
      hash: '$pbkdf2-sha512$i=1,l=64$c2FsdA$hn9wzxreAs/zdSWZo6U9xK80x6ZpgVrl1RNVThyM8lLALUcKKFoFAbrZmb/pQ8CPBQI119aLHaVeY/c7YKV/zg',
    },
  },
  // Django's tests/auth_tests/test_hashers.py (Django 1.5: 10000 iterations).
  {
    source: 'Django test_hashers.py',
    password: 'lètmein',
    input: { algorithm: 'django-pbkdf2-sha256', hash: 'pbkdf2_sha256$10000$seasalt$CWWFdHOWwPnki7HvkcqN9iA2T3KLW1cf2uZ5kvArtVY=' },
  },
  // The README of github.com/firebase/scrypt (its example user and project parameters).
  {
    source: 'firebase/scrypt README',
    password: 'user1password',
    input: {
      algorithm: 'firebase-scrypt',
      hash: 'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
      salt: '42xEC+ixf3L2lw==',
      ...FIREBASE_PARAMS,
    },
  },
  // Openwall phpass's test.php, and John the Ripper's phpass_common.c test vectors.
  { source: 'Openwall phpass test.php', password: 'test12345', input: { algorithm: 'phpass', hash: '$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0' } },
  { source: 'John the Ripper phpass_common.c', password: 'a', input: { algorithm: 'phpass', hash: '$P$9saltstriAcRMGl.91RgbAD6WSq64z.' } },
  // phpBB's $H$ is the same construction under another prefix (phpass's own portable hash).
  { source: 'Openwall phpass test.php, phpBB prefix', password: 'test12345', input: { algorithm: 'phpass', hash: '$H$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0' } },
  // Ulrich Drepper, "Unix crypt using SHA-256 and SHA-512", test vectors.
  {
    source: 'Drepper SHA-crypt',
    password: 'Hello world!',
    input: { algorithm: 'sha256-crypt', hash: '$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5' },
  },
  {
    source: 'Drepper SHA-crypt',
    password: 'Hello world!',
    input: { algorithm: 'sha256-crypt', hash: '$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA' },
  },
  {
    source: 'Drepper SHA-crypt',
    password: 'This is just a test',
    input: { algorithm: 'sha256-crypt', hash: '$5$rounds=5000$toolongsaltstrin$Un/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvxa5' },
  },
  {
    source: 'Drepper SHA-crypt',
    password: 'Hello world!',
    input: { algorithm: 'sha512-crypt', hash: '$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1' },
  },
  {
    source: 'Drepper SHA-crypt',
    password: 'we have a short salt string but not a short password',
    input: { algorithm: 'sha512-crypt', hash: '$6$rounds=77777$short$WuQyW2YR.hBNpjjRhpYD/ifIw05xdfeEyQoMxIXbkvr0gge1a1x3yRULJ5CCaUeOxFmtlcGZelFl5CxtgfiAc0' },
  },
  {
    source: 'Drepper SHA-crypt (rounds below the minimum are raised to 1000)',
    password: 'the minimum number is still observed',
    input: {
      algorithm: 'sha512-crypt',
      hash: '$6$rounds=1000$roundstoolow$kUMsbe306n21p9R.FRkW3IGn.S9NPN0x50YhH1xhLsPuWGsUSklZt58jaTfF4ZEQpyUNGc0dqbpBYYBaHHrsX.',
    },
  },
];

describe('imported password hashes: published known-answer vectors, verified in the hashing pool', () => {
  let pool: HashPool;
  let hasher: PasswordHasher;
  beforeAll(() => {
    pool = createHashPool({ size: 2 });
    hasher = createBcryptHasher({ rounds: 4, pool });
  });
  afterAll(() => pool.close());

  test.each(VECTORS)('$input.algorithm ($source): the right password matches, another does not', async ({ password, input }) => {
    const encoded = encodeImportedPassword(input);
    if (!encoded.ok) throw new Error(encoded.error);
    expect(encoded.passwordHash).toMatch(/^imported:/);
    expect(hasher.needsRehash(encoded.passwordHash)).toBe(true);
    expect(await hasher.verify(password, encoded.passwordHash)).toBe(true);
    expect(await hasher.verify(`${password}x`, encoded.passwordHash)).toBe(false);
    expect(await hasher.verify('', encoded.passwordHash)).toBe(false);
  });

  test.each(VECTORS)('$input.algorithm ($source): exports as it came in, and the export imports to the same stored hash', ({ input }) => {
    const encoded = encodeImportedPassword(input);
    if (!encoded.ok) throw new Error(encoded.error);
    const exported = exportPasswordHash(encoded.passwordHash);
    // $2y$ is read as $2b$ (the same algorithm); everything else comes back byte for byte.
    expect(exported).toEqual(input.hash.startsWith('$2y$') ? { ...input, hash: `$2b$${input.hash.slice(4)}` } : input);
    expect(encodeImportedPassword(exported)).toEqual(encoded);
  });

  test("gatehouse-v1 is Gatehouse's own hash: stored unchanged, signs in as before, and needs no rehash at the same cost", async () => {
    const own = await hasher.hash('a password of ours');
    const encoded = encodeImportedPassword({ algorithm: 'gatehouse-v1', hash: own });
    expect(encoded).toEqual({ ok: true, passwordHash: own });
    expect(exportPasswordHash(own)).toEqual({ algorithm: 'gatehouse-v1', hash: own });
    expect(await hasher.verify('a password of ours', own)).toBe(true);
    expect(hasher.needsRehash(own)).toBe(false);
    // Plain bcrypt of the same password is not Gatehouse's scheme: the two never mix.
    const plain = encodeImportedPassword({ algorithm: 'bcrypt', hash: own });
    expect(plain.ok && (await hasher.verify('a password of ours', plain.passwordHash))).toBe(false);
  });

  test('a stored imported hash that cannot be read never matches, and is no error', async () => {
    expect(await hasher.verify('password', 'imported:argon2id:$argon2id$garbage')).toBe(false);
    expect(await hasher.verify('password', 'imported:nonsense:abc')).toBe(false);
  });

  test('a fast legacy hash answers no sooner than a bcrypt compare at our cost (no timing oracle)', async () => {
    const slowPool = createHashPool({ size: 1 });
    const slow = createBcryptHasher({ rounds: 10, pool: slowPool });
    try {
      await slow.verify('warm-up', null); // the thread learns what a compare at cost 10 takes
      const phpass = encodeImportedPassword({ algorithm: 'phpass', hash: '$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0' });
      if (!phpass.ok) throw new Error(phpass.error);
      const { passwordHash } = phpass;
      // The median of five of each, alternating: one stall of a shared machine moves neither.
      const unknownTimes: number[] = [];
      const importedTimes: number[] = [];
      for (let round = 0; round < 5; round++) {
        let started = performance.now();
        await slow.verify('wrong', null);
        unknownTimes.push(performance.now() - started);
        started = performance.now();
        expect(await slow.verify('wrong', passwordHash)).toBe(false);
        importedTimes.push(performance.now() - started);
      }
      const median = (times: number[]) => [...times].sort((a, b) => a - b)[2]!;
      const unknownEmail = median(unknownTimes);
      const imported = median(importedTimes);
      // phpass at 2^11 MD5 rounds alone takes a millisecond or two; bcrypt at cost 10 tens of them.
      expect(imported).toBeGreaterThan(unknownEmail * 0.7);
    } finally {
      await slowPool.close();
    }
  });
});

describe('imported password hashes: what is refused, and why', () => {
  test.each([
    [{ algorithm: 'md5', hash: '5f4dcc3b5aa765d61d8327deb882cf99' }, /unsalted md5/],
    [{ algorithm: 'sha1', hash: '5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8' }, /unsalted sha1/],
    [{ algorithm: 'sha256', hash: '5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8' }, /unsalted sha256/],
    [{ algorithm: 'whirlpool', hash: 'abc' }, /Unsupported password algorithm "whirlpool"/],
    [{ algorithm: 'bcrypt', hash: '$2b$10$tooshort' }, /bcrypt hash is malformed/],
    [{ algorithm: 'bcrypt', hash: '$2b$16$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW' }, /bcrypt cost \(16, at most 15\)/],
    [{ algorithm: 'argon2id', hash: '$argon2i$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$wWKIMhR9lyDFvRz9YTZweHKfbftvj+qf+YFY4NeBbtA' }, /argon2id hash is malformed/],
    [{ algorithm: 'argon2id', hash: '$argon2id$v=19$m=524288,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc' }, /argon2 memory/],
    [{ algorithm: 'argon2id', hash: '$argon2id$v=19$m=65536,t=11,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc' }, /argon2 passes/],
    [{ algorithm: 'argon2id', hash: '$argon2id$v=19$m=65536,t=2,p=17$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc' }, /argon2 lanes/],
    [
      { algorithm: 'scrypt', hash: '$scrypt$ln=21,r=8,p=1$TmFDbA$/bq+HJ00cgB4VucZDQHp/nxq18vII3gw53N2Y0s3MWIurzDZLiKjiG/xCSedmDDaxyevuUqD7m2DYMvfoswGQA' },
      /scrypt N/,
    ],
    [
      { algorithm: 'scrypt', hash: '$scrypt$ln=20,r=16,p=1$TmFDbA$/bq+HJ00cgB4VucZDQHp/nxq18vII3gw53N2Y0s3MWIurzDZLiKjiG/xCSedmDDaxyevuUqD7m2DYMvfoswGQA' },
      /scrypt memory/,
    ],
    [{ algorithm: 'scrypt', hash: '$scrypt$N=1024$salt$hash' }, /scrypt hash is malformed/],
    [{ algorithm: 'pbkdf2-sha256', hash: '$pbkdf2-sha256$10000001$4vjV83LKPjQzk31VI4E0Vw$hsYF68OiOUPdDZ1Fg.fJPeq1h/gXXY7acBp9/6c.tmQ' }, /PBKDF2 iterations/],
    [
      { algorithm: 'pbkdf2-sha512', hash: '$pbkdf2-sha256$1212$4vjV83LKPjQzk31VI4E0Vw$hsYF68OiOUPdDZ1Fg.fJPeq1h/gXXY7acBp9/6c.tmQ' },
      /pbkdf2-sha512 hash is malformed/,
    ],
    [{ algorithm: 'django-pbkdf2-sha256', hash: 'pbkdf2_sha256$10000$seasalt' }, /django-pbkdf2-sha256 hash is malformed/],
    [{ algorithm: 'phpass', hash: '$P$JIQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0' }, /phpass rounds \(2\^21/],
    [{ algorithm: 'phpass', hash: '$P$9IQRaTwm' }, /phpass hash is malformed/],
    [
      { algorithm: 'sha512-crypt', hash: '$6$rounds=1000001$short$WuQyW2YR.hBNpjjRhpYD/ifIw05xdfeEyQoMxIXbkvr0gge1a1x3yRULJ5CCaUeOxFmtlcGZelFl5CxtgfiAc0' },
      /SHA-crypt rounds/,
    ],
    [
      { algorithm: 'sha256-crypt', hash: '$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1' },
      /sha256-crypt hash is malformed/,
    ],
    [
      { algorithm: 'firebase-scrypt', hash: 'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==', ...FIREBASE_PARAMS },
      /firebase-scrypt hash is malformed/,
    ],
    [{ algorithm: 'firebase-scrypt', hash: 'lSrf', salt: '42xEC+ixf3L2lw==', ...FIREBASE_PARAMS, memCost: 21 }, /scrypt N/],
    [
      { algorithm: 'gatehouse-v1', hash: '$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc' },
      /gatehouse-v1 hash is malformed/,
    ],
    [{ algorithm: 'bcrypt', hash: 'x'.repeat(513) }, /too long/],
    ['$2b$10$abc', /must be an object/],
    [{ algorithm: 'bcrypt' }, /password.hash must be/],
    [{ hash: '$2b$10$abc' }, /password.algorithm must be/],
  ])('%j is refused', (input, reason) => {
    const result = encodeImportedPassword(input);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatch(reason);
    // The reason goes into a per-line report: it never repeats the hash.
    const hash = typeof input === 'object' && 'hash' in input ? String(input.hash) : '';
    if (hash.length > 12) expect(result.error).not.toContain(hash.slice(-12));
  });
});

describeEachDialect('the first sign-in with an imported hash stores our own and forgets the old one', (dialect) => {
  let t: TestGatehouse;
  beforeAll(async () => {
    t = await createTestGatehouse(dialect, { env: { RATE_LIMIT_LOGIN: '1000/15m', RATE_LIMIT_REGISTER: '1000/1h' } });
  });
  afterAll(() => t.close());

  /** Registers `email`, then gives it the imported hash, as an import would; returns its session cookie. */
  async function importedUser(email: string, input: ImportedPassword): Promise<string> {
    const registered = await t.request('POST', '/api/auth/register', { ip: ipOf(email), json: { email, password: STRONG_PASSWORD } });
    expect(registered.status).toBe(201);
    const encoded = encodeImportedPassword(input);
    if (!encoded.ok) throw new Error(encoded.error);
    const user = (await t.gatehouse.stores.users.findUserByEmail(email))!;
    await t.gatehouse.stores.users.setPassword(user.id, encoded.passwordHash);
    expect(await storedHash(email)).toBe(encoded.passwordHash);
    return cookieFrom(registered, 'gatehouse_session')!;
  }

  async function storedHash(email: string): Promise<string | null> {
    const row = await t.database.kysely.selectFrom('users').select('password_hash').where('email', '=', email).executeTakeFirstOrThrow();
    return row.password_hash;
  }

  // Each account signs in from its own address, so one test's wrong passwords never lock another's.
  const ips = new Map<string, string>();
  const ipOf = (email: string): string => ips.get(email) ?? ips.set(email, `198.51.100.${ips.size + 1}`).get(email)!;
  const login = (email: string, password: string) => t.request('POST', '/api/auth/login', { ip: ipOf(email), json: { email, password } });

  // One vector of each format (the first): every format signs in over HTTP and is replaced.
  const oneOfEach = VECTORS.filter((vector, at) => VECTORS.findIndex((other) => other.input.algorithm === vector.input.algorithm) === at);
  test.each(oneOfEach)(
    '$input.algorithm: a wrong password is 401 and changes nothing; the right one signs in and leaves a bcrypt hash at BCRYPT_ROUNDS',
    async ({ password, input }) => {
      const email = `${input.algorithm}@example.com`;
      await importedUser(email, input);
      const imported = await storedHash(email);

      expect((await login(email, `${password}-wrong`)).status).toBe(401);
      await t.gatehouse.deliverQueuedEmails();
      expect(await storedHash(email)).toBe(imported);

      expect((await login(email, password)).status).toBe(200);
      await t.gatehouse.deliverQueuedEmails(); // settles the rehash, done off the response path
      const after = await storedHash(email);
      expect(after).toMatch(/^\$2b\$04\$.{53}$/);
      const legacy = await t.database.kysely.selectFrom('users').select('id').where('password_hash', 'like', 'imported:%').where('email', '=', email).execute();
      expect(legacy).toEqual([]);

      expect((await login(email, password)).status).toBe(200);
      expect(await storedHash(email)).toBe(after);
      expect((await login(email, `${password}-wrong`)).status).toBe(401);
    },
  );

  test('re-authentication takes the imported password too: changing the password with it as the current one', async () => {
    const cookie = await importedUser('reauth@example.com', { algorithm: 'sha256-crypt', hash: '$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5' });
    const change = (currentPassword: string) =>
      t.request('POST', '/api/auth/password/change', { cookie, json: { currentPassword, newPassword: 'A-New-Password-42' } });
    expect((await change('Hello world?')).status).toBe(401);
    expect((await change('Hello world!')).status).toBe(200);
    expect(await storedHash('reauth@example.com')).toMatch(/^\$2b\$04\$/);
    expect((await login('reauth@example.com', 'A-New-Password-42')).status).toBe(200);
  });
});
