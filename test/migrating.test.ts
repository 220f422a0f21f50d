/**
 * The converters of tools/migrate (docs/migrating.md): each runs on a sample export written in
 * its system's documented format, with hashes made from passwords chosen here, and must write
 * Gatehouse import lines with the right algorithm names and parameters. Where the converter
 * re-encodes a hash (Keycloak's and Better Auth's into PHC strings, Django's scrypt), the PHC
 * string is checked against the chosen password with node:crypto, so a wrong encoding fails here.
 * The Firebase sample's first user is the published test vector of github.com/firebase/scrypt
 * (password "user1password"); the phpass hash was checked against phpass's own test vector
 * ("test12345" → $P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0) by the script that made it.
 */
import { execFile } from 'node:child_process';
import { pbkdf2Sync, scryptSync } from 'node:crypto';
import path from 'node:path';
import { verify as argon2Verify } from '@node-rs/argon2';
import bcrypt from 'bcrypt';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const ADMIN_KEY = 'admin-key-for-tests-0123456789-abcdefghij';
const FIXTURES = path.resolve('test/fixtures/migrating');
const fixture = (name: string) => path.join(FIXTURES, name);

/** The published Firebase hash parameters that go with the firebase/scrypt test vector. */
const FIREBASE_HASH_CONFIG = {
  signerKey: 'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==',
  saltSeparator: 'Bw==',
  rounds: 8,
  memCost: 14,
};

interface ImportLine {
  email: string;
  emailVerified?: boolean;
  createdAt?: string;
  externalId?: string;
  disabled?: boolean;
  password?: { algorithm: string; hash: string; [parameter: string]: unknown };
  providers?: { provider: string; providerUserId: string; login?: string }[];
}

/** Each source: the converter's arguments, and the password chosen for each person with one. */
const SOURCES: { source: string; args: string[]; passwords: Record<string, string> }[] = [
  {
    source: 'auth0',
    args: ['--hashes', fixture('auth0.hashes.ndjson'), '--users', fixture('auth0.users.ndjson')],
    passwords: { 'alice@auth0.example': 'Auth0-alice-pw1', 'carol@auth0.example': 'Auth0-alice-pw1' },
  },
  { source: 'supabase', args: [fixture('supabase.json')], passwords: { 'bob@supabase.example': 'Supabase-bob-pw2' } },
  {
    source: 'firebase',
    args: [
      fixture('firebase.json'),
      ...['--signer-key', FIREBASE_HASH_CONFIG.signerKey, '--salt-separator', FIREBASE_HASH_CONFIG.saltSeparator],
      ...['--rounds', String(FIREBASE_HASH_CONFIG.rounds), '--mem-cost', String(FIREBASE_HASH_CONFIG.memCost)],
    ],
    passwords: { 'user1@firebase.example': 'user1password', 'dana@firebase.example': 'Firebase-dana-pw4' },
  },
  {
    source: 'django',
    args: [fixture('django.users.json'), '--email-addresses', fixture('django.emailaddress.json'), '--social-accounts', fixture('django.socialaccount.json')],
    passwords: {
      'erin@django.example': 'Django-erin-pw5',
      'frank@django.example': 'Django-frank-pw6',
      'grace@django.example': 'Django-grace-pw7',
      'heidi@django.example': 'Django-heidi-pw8',
    },
  },
  {
    source: 'wordpress',
    args: [fixture('wordpress.tsv')],
    passwords: { 'ivan@wordpress.example': 'WordPress-ivan-pw9', 'judy@wordpress.example': 'WordPress-judy-pw10' },
  },
  {
    source: 'keycloak',
    args: [fixture('keycloak.realm.json')],
    passwords: { 'liam@keycloak.example': 'Keycloak-liam-pw12', 'mia@keycloak.example': 'Keycloak-mia-pw13', 'noah@keycloak.example': 'Keycloak-noah-pw14' },
  },
  { source: 'better-auth', args: [fixture('better-auth.json')], passwords: { 'olivia@betterauth.example': 'BetterAuth-olivia-pw15' } },
];

function convert(source: string, args: string[]): Promise<{ code: number; lines: ImportLine[]; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.resolve('tools/migrate', `${source}.mjs`), ...args], { timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      const lines = stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as ImportLine);
      resolve({ code, lines, stderr });
    });
  });
}

const byEmail = (lines: ImportLine[]) => Object.fromEntries(lines.map((line) => [line.email, line]));
const fromPhcBase64 = (text: string) => Buffer.from(text, 'base64');

/** Checks a PHC scrypt or PBKDF2 string against a password with node:crypto (the reference). */
function phcMatches(hash: string, password: string): boolean {
  const [, id, params, salt, key] = hash.split('$');
  const values = Object.fromEntries(params!.split(',').map((pair) => pair.split('=')));
  const expected = fromPhcBase64(key!);
  if (id === 'scrypt') {
    const N = 2 ** Number(values.ln);
    const derived = scryptSync(password, fromPhcBase64(salt!), expected.length, { N, r: Number(values.r), p: Number(values.p), maxmem: 256 * 1024 * 1024 });
    return derived.equals(expected);
  }
  const digest = id === 'pbkdf2-sha512' ? 'sha512' : 'sha256';
  return pbkdf2Sync(password, fromPhcBase64(salt!), Number(values.i), expected.length, digest).equals(expected);
}

describe('tools/migrate converters, on sample exports of each system', { timeout: 60_000 }, () => {
  test('Auth0: bcrypt from the password hash export; profile, blocked flag and verified social sign-ins from the bulk export', async () => {
    const { code, lines } = await convert('auth0', SOURCES[0]!.args);
    expect(code).toBe(0);
    const users = byEmail(lines);
    expect(Object.keys(users)).toEqual(['alice@auth0.example', 'carol@auth0.example', 'dave@auth0.example']);
    expect(users['alice@auth0.example']).toMatchObject({
      emailVerified: true,
      externalId: 'auth0|5dea9f9c82dd7c0e76e4ec93',
      createdAt: '2024-03-06T18:36:12.412Z',
      password: { algorithm: 'bcrypt' },
      providers: [{ provider: 'github', providerUserId: '1234567' }],
    });
    expect(users['alice@auth0.example']!.disabled).toBeUndefined();
    // alt_id names the user when set; blocked becomes disabled.
    expect(users['carol@auth0.example']).toMatchObject({ emailVerified: false, externalId: 'auth0|carol-legacy-7', disabled: true });
    expect(users['dave@auth0.example']).toEqual({
      email: 'dave@auth0.example',
      emailVerified: true,
      externalId: 'google-oauth2|109876543210',
      createdAt: '2024-06-02T09:30:00.000Z',
      providers: [{ provider: 'google', providerUserId: '109876543210' }],
    });
    expect(await bcrypt.compare('Auth0-alice-pw1', users['alice@auth0.example']!.password!.hash)).toBe(true);
  });

  test('Supabase: encrypted_password as bcrypt, confirmed email, ban, identities other than email as providers; anonymous users skipped', async () => {
    const { code, lines, stderr } = await convert('supabase', SOURCES[1]!.args);
    expect(code).toBe(0);
    expect(lines).toEqual([
      {
        email: 'bob@supabase.example',
        emailVerified: true,
        createdAt: '2024-02-10T12:00:00.000Z',
        externalId: '6f1b7a0e-3c1d-4f6e-9a55-1c2d3e4f5a6b',
        password: { algorithm: 'bcrypt', hash: expect.stringMatching(/^\$2a\$10\$/) as string },
        providers: [{ provider: 'github', providerUserId: '7654321' }],
      },
      {
        email: 'eve@supabase.example',
        emailVerified: true,
        createdAt: '2024-03-11T08:59:00.000Z',
        externalId: '0a9b8c7d-6e5f-4a3b-2c1d-0e9f8a7b6c5d',
        disabled: true,
        providers: [{ provider: 'google', providerUserId: '112233445566778899' }],
      },
    ]);
    expect(stderr).toMatch(/11111111-2222-4333-8444-555555555555: no email, anonymous or deleted: skipped/);
    expect(await bcrypt.compare('Supabase-bob-pw2', lines[0]!.password!.hash)).toBe(true);
  });

  test('Firebase: firebase-scrypt with the hash, salt and the project hash parameters; disabled and provider links kept', async () => {
    const { code, lines, stderr } = await convert('firebase', SOURCES[2]!.args);
    expect(code).toBe(0);
    const users = byEmail(lines);
    expect(Object.keys(users)).toEqual(['user1@firebase.example', 'dana@firebase.example']);
    expect(users['user1@firebase.example']).toEqual({
      email: 'user1@firebase.example',
      emailVerified: true,
      createdAt: '2017-02-10T21:31:11.000Z',
      externalId: 'Ky8cIjqLQeXDgS9tvAkPfVb1vYB3',
      password: {
        algorithm: 'firebase-scrypt',
        hash: 'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
        salt: '42xEC+ixf3L2lw==',
        ...FIREBASE_HASH_CONFIG,
      },
      providers: [{ provider: 'google', providerUserId: '104857600000000000001' }],
    });
    expect(users['dana@firebase.example']).toMatchObject({
      emailVerified: false,
      disabled: true,
      password: { algorithm: 'firebase-scrypt', rounds: 8, memCost: 14 },
    });
    expect(stderr).toMatch(/PhoneOnlyUser000000000000001: no email/);
    // Without the project's hash parameters the hashes are useless: refused as bad arguments.
    const missing = await convert('firebase', [fixture('firebase.json')]);
    expect([missing.code, missing.lines]).toEqual([2, []]);
    expect(missing.stderr).toMatch(/--signer-key is required/);
  });

  test('Django: pbkdf2_sha256 as is, argon2 and bcrypt unwrapped, scrypt re-encoded as PHC; allauth verification and social accounts', async () => {
    const { code, lines } = await convert('django', SOURCES[3]!.args);
    expect(code).toBe(0);
    const users = byEmail(lines);
    expect(users['erin@django.example']).toMatchObject({ emailVerified: true, externalId: '1', password: { algorithm: 'django-pbkdf2-sha256' } });
    expect(users['erin@django.example']!.password!.hash).toMatch(/^pbkdf2_sha256\$600000\$/);
    expect(users['frank@django.example']).toMatchObject({ emailVerified: false, password: { algorithm: 'argon2id' } });
    expect(users['frank@django.example']!.password!.hash).toMatch(/^\$argon2id\$v=19\$m=102400,t=2,p=8\$/);
    expect(users['grace@django.example']).toMatchObject({ disabled: true, password: { algorithm: 'scrypt' } });
    expect(users['grace@django.example']!.password!.hash).toMatch(/^\$scrypt\$ln=14,r=8,p=1\$/);
    expect(users['heidi@django.example']!.password).toEqual({ algorithm: 'bcrypt', hash: expect.stringMatching(/^\$2b\$12\$/) as string });
    // An unusable password ("!…") is no password; the allauth GitHub account is kept.
    expect(users['ivy@django.example']).toEqual({
      email: 'ivy@django.example',
      emailVerified: false,
      createdAt: '2023-05-15T10:00:00.000Z',
      externalId: '5',
      providers: [{ provider: 'github', providerUserId: '5550001' }],
    });
    const erin = users['erin@django.example']!.password!.hash.split('$');
    expect(pbkdf2Sync('Django-erin-pw5', erin[2]!, Number(erin[1]), 32, 'sha256').toString('base64')).toBe(erin[3]);
    expect(await argon2Verify(users['frank@django.example']!.password!.hash, 'Django-frank-pw6')).toBe(true);
    expect(phcMatches(users['grace@django.example']!.password!.hash, 'Django-grace-pw7')).toBe(true);
    expect(phcMatches(users['grace@django.example']!.password!.hash, 'Django-grace-pw8')).toBe(false);
    expect(await bcrypt.compare('Django-heidi-pw8', users['heidi@django.example']!.password!.hash)).toBe(true);
  });

  test('WordPress: phpass and plain bcrypt imported; a 6.8 $wp$ hash and an MD5 hash leave the person without a password, with a warning', async () => {
    const { code, lines, stderr } = await convert('wordpress', SOURCES[4]!.args);
    expect(code).toBe(0);
    const users = byEmail(lines);
    expect(users['ivan@wordpress.example']).toEqual({
      email: 'ivan@wordpress.example',
      emailVerified: false,
      createdAt: '2019-07-01T08:09:10.000Z',
      externalId: '1',
      password: { algorithm: 'phpass', hash: expect.stringMatching(/^\$P\$B.{30}$/) as string },
    });
    expect(users['judy@wordpress.example']!.password).toEqual({ algorithm: 'bcrypt', hash: expect.stringMatching(/^\$2y\$10\$/) as string });
    expect(users['ken@wordpress.example']!.password).toBeUndefined();
    expect(users['legacy@wordpress.example']!.password).toBeUndefined();
    expect(stderr).toMatch(/ken@wordpress\.example: a WordPress 6\.8 hash/);
    expect(stderr).toMatch(/legacy@wordpress\.example: an unsalted MD5 hash/);
    // $2y$ (PHP's name) is the same algorithm as $2b$, which the bcrypt package reads.
    expect(await bcrypt.compare('WordPress-judy-pw10', users['judy@wordpress.example']!.password!.hash.replace(/^\$2y\$/, '$2b$'))).toBe(true);
  });

  test('Keycloak: pbkdf2-sha256, pbkdf2-sha512 and argon2 credentials as PHC strings; enabled, federated identities', async () => {
    const { code, lines } = await convert('keycloak', SOURCES[5]!.args);
    expect(code).toBe(0);
    const users = byEmail(lines);
    expect(users['liam@keycloak.example']).toMatchObject({
      emailVerified: true,
      externalId: 'f27826f7-6ec1-4283-822f-10e0c51a9089',
      password: { algorithm: 'pbkdf2-sha256' },
    });
    expect(users['liam@keycloak.example']!.password!.hash).toMatch(/^\$pbkdf2-sha256\$i=27500\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(users['mia@keycloak.example']).toMatchObject({ disabled: true, password: { algorithm: 'pbkdf2-sha512' } });
    expect(users['mia@keycloak.example']!.password!.hash).toMatch(/^\$pbkdf2-sha512\$i=210000\$/);
    expect(users['noah@keycloak.example']).toMatchObject({
      createdAt: '2024-03-09T16:00:00.000Z',
      password: { algorithm: 'argon2id', hash: expect.stringMatching(/^\$argon2id\$v=19\$m=7168,t=5,p=1\$/) as string },
      providers: [{ provider: 'github', providerUserId: '8675309', login: 'noah-gh' }],
    });
    expect(phcMatches(users['liam@keycloak.example']!.password!.hash, 'Keycloak-liam-pw12')).toBe(true);
    expect(phcMatches(users['mia@keycloak.example']!.password!.hash, 'Keycloak-mia-pw13')).toBe(true);
    expect(phcMatches(users['mia@keycloak.example']!.password!.hash, 'Keycloak-liam-pw12')).toBe(false);
    expect(await argon2Verify(users['noah@keycloak.example']!.password!.hash, 'Keycloak-noah-pw14')).toBe(true);
  });

  test('Better Auth: salt:key hex becomes a PHC scrypt string whose salt is the hex text itself (N=16384, r=16, p=1, 64-byte key)', async () => {
    const { code, lines } = await convert('better-auth', SOURCES[6]!.args);
    expect(code).toBe(0);
    const users = byEmail(lines);
    const olivia = users['olivia@betterauth.example']!;
    expect(olivia).toMatchObject({
      emailVerified: true,
      externalId: 'Jd2kq8ZxP0wLm3Nv5Rt7Yb9C',
      password: { algorithm: 'scrypt' },
      providers: [{ provider: 'github', providerUserId: '24681357' }],
    });
    const [, , params, salt, key] = olivia.password!.hash.split('$');
    expect(params).toBe('ln=14,r=16,p=1');
    expect(fromPhcBase64(salt!).toString('ascii')).toMatch(/^[0-9a-f]{32}$/);
    expect(fromPhcBase64(key!)).toHaveLength(64);
    expect(phcMatches(olivia.password!.hash, 'BetterAuth-olivia-pw15')).toBe(true);
    expect(users['pat@betterauth.example']).toEqual({
      email: 'pat@betterauth.example',
      emailVerified: false,
      createdAt: '2025-02-01T09:00:00.000Z',
      externalId: 'Qm4Wn6Er8Ty0Ui2Op4As6Df8',
      disabled: true,
      providers: [{ provider: 'google', providerUserId: '118000000000000000042' }],
    });
  });

  test('a missing or unreadable input is a message and exit 2, never a stack trace', async () => {
    for (const source of ['supabase', 'keycloak', 'better-auth', 'wordpress', 'django']) {
      const result = await convert(source, [fixture('no-such-file.json')]);
      expect([source, result.code, result.lines]).toEqual([source, 2, []]);
      expect(result.stderr).toMatch(/^error: /);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    const auth0 = await convert('auth0', []);
    expect([auth0.code, auth0.stderr.trim()]).toEqual([2, 'error: give --hashes FILE and/or --users FILE']);
  });
});

describeEachDialect('converted exports imported into Gatehouse: everyone signs in with the password they had', (dialect) => {
  // A Gatehouse of its own for each source: a team imports from one system, and two systems'
  // ids (Django's 1, 2, 3 and WordPress's) would meet as the same externalId.
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, {
      env: { ADMIN_API_KEY: ADMIN_KEY, RATE_LIMIT_LOGIN: '1000/15m', RATE_LIMIT_ADMIN: '1000/1m', LOCKOUT_MAX_FAILURES: '1000' },
    });
  });
  afterEach(async () => {
    await t?.close();
  });

  const admin = (method: string, url: string, body?: string) =>
    t.request(method, `/api/admin${url}`, {
      ip: '192.0.2.50',
      body,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/x-ndjson' }) },
    });
  const login = (email: string, password: string) => t.request('POST', '/api/auth/login', { json: { email, password } });

  for (const { source, args, passwords } of SOURCES) {
    test(
      `${source}: the converter's output imports with no line refused; each person signs in (a disabled one once enabled), a wrong password does not`,
      { timeout: 120_000 },
      async () => {
        const { code, lines } = await convert(source, args);
        expect(code).toBe(0);
        const response = await admin('POST', '/users/import', lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ imported: lines.length, skipped: 0, failed: [] });
        for (const [email, password] of Object.entries(passwords)) {
          const line = lines.find((candidate) => candidate.email === email)!;
          expect((await login(email, `${password}-not`)).status, `${email}: a wrong password`).toBe(401);
          if (line.disabled) {
            expect((await login(email, password)).status, `${email}: disabled`).toBe(403);
            const found = (await (await admin('GET', `/users?query=${encodeURIComponent(email)}`)).json()) as { users: { id: string }[] };
            expect((await admin('POST', `/users/${found.users[0]!.id}/enable`)).status).toBe(200);
          }
          expect((await login(email, password)).status, `${email} (${line.password!.algorithm})`).toBe(200);
          // The second sign-in checks the bcrypt hash stored at the first, not the imported one.
          expect((await login(email, password)).status, `${email}: after the rehash`).toBe(200);
        }
      },
    );
  }
});
