/**
 * Unit tests for the provider flow's primitives: PKCE against RFC 7636's published vector, the
 * AES-256-GCM envelope (differential against node:crypto, tamper, AAD, rotation), the return
 * path rules and the signed pending sign-in.
 */
import { createDecipheriv, randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { createEnvelope, keyIdOf } from '../src/crypto/envelope.js';
import { SIGN_IN_FLOW_LIFETIME_SECONDS, openPendingSignIn, sealPendingSignIn } from '../src/oauth/flow-cookie.js';
import { createCodeChallenge, generateCodeVerifier, generateNonce, generateState } from '../src/oauth/pkce.js';
import { resolveReturnTo } from '../src/http/return-to.js';
import { secureRandom } from '../src/random.js';

describe('createCodeChallenge()', () => {
  // RFC 7636 Appendix B, https://www.rfc-editor.org/rfc/rfc7636#appendix-B. (The issue text quoted
  // the challenge as `E9Melhoa2OwvFrEXXWbG4ZPgNsaTvmIHZJlKbbOqgKE`; the RFC, and SHA-256 itself,
  // give the value below — checked independently with Python's hashlib.)
  test('matches the RFC 7636 Appendix B S256 test vector', () => {
    expect(createCodeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  test('verifier, state and nonce are 32 random bytes, base64url without padding (43 characters), never repeated', () => {
    const values = new Set<string>();
    for (let i = 0; i < 50; i += 1) {
      for (const value of [generateCodeVerifier(secureRandom), generateState(secureRandom), generateNonce(secureRandom)]) {
        expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(Buffer.from(value, 'base64url')).toHaveLength(32);
        values.add(value);
      }
    }
    expect(values.size).toBe(150);
  });

  test('uses the injected random reader', () => {
    const zeros = { read: (bytes: Uint8Array) => bytes.fill(0) };
    expect(generateCodeVerifier(zeros)).toBe('A'.repeat(43));
    expect(generateNonce(zeros)).toBe('A'.repeat(43));
  });
});

describe('createEnvelope()', () => {
  const key = randomBytes(32);
  const older = randomBytes(32);

  test('round trip, and the format is v1.<keyId>.<iv>.<ciphertext>.<tag> with a 96-bit IV and 128-bit tag', () => {
    const envelope = createEnvelope([key]);
    const sealed = envelope.seal('gho_secret-token', 'acct-1.access_token');
    expect(envelope.open(sealed, 'acct-1.access_token')).toBe('gho_secret-token');
    const [version, keyId, iv, ciphertext, tag] = sealed.split('.');
    expect(version).toBe('v1');
    expect(keyId).toBe(keyIdOf(key));
    expect(Buffer.from(iv!, 'base64url')).toHaveLength(12);
    expect(Buffer.from(tag!, 'base64url')).toHaveLength(16);
    expect(sealed).not.toContain('gho_secret-token');
    // Differential check: plain node:crypto AES-256-GCM opens it with the same parts.
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv!, 'base64url'));
    decipher.setAAD(Buffer.from('acct-1.access_token'));
    decipher.setAuthTag(Buffer.from(tag!, 'base64url'));
    expect(Buffer.concat([decipher.update(Buffer.from(ciphertext!, 'base64url')), decipher.final()]).toString()).toBe('gho_secret-token');
  });

  test('a fresh IV each time: sealing the same value twice gives different envelopes', () => {
    const envelope = createEnvelope([key]);
    const a = envelope.seal('same', 'aad');
    const b = envelope.seal('same', 'aad');
    expect(a).not.toBe(b);
    expect(a.split('.')[2]).not.toBe(b.split('.')[2]);
  });

  test('any tampered part, a wrong version or a malformed value opens to null', () => {
    const envelope = createEnvelope([key]);
    const sealed = envelope.seal('gho_secret-token', 'aad');
    const parts = sealed.split('.');
    for (const index of [2, 3, 4]) {
      const bytes = Buffer.from(parts[index]!, 'base64url');
      bytes[0] = bytes[0]! ^ 1;
      const tampered = [...parts];
      tampered[index] = bytes.toString('base64url');
      expect(envelope.open(tampered.join('.'), 'aad')).toBeNull();
    }
    expect(envelope.open(['v2', ...parts.slice(1)].join('.'), 'aad')).toBeNull();
    expect(envelope.open(parts.slice(0, 4).join('.'), 'aad')).toBeNull();
    const shortTag = [...parts.slice(0, 4), Buffer.from(parts[4]!, 'base64url').subarray(0, 8).toString('base64url')];
    expect(envelope.open(shortTag.join('.'), 'aad')).toBeNull();
    expect(envelope.open('', 'aad')).toBeNull();
  });

  test('the wrong associated data (another account, the other column) opens to null', () => {
    const envelope = createEnvelope([key]);
    const sealed = envelope.seal('gho_secret-token', 'acct-1.access_token');
    expect(envelope.open(sealed, 'acct-2.access_token')).toBeNull();
    expect(envelope.open(sealed, 'acct-1.refresh_token')).toBeNull();
  });

  test('rotation: the first key seals, older keys still open, an unknown key does not', () => {
    const before = createEnvelope([older]);
    const sealedWithOlder = before.seal('old-token', 'aad');
    const rotated = createEnvelope([key, older]);
    expect(rotated.open(sealedWithOlder, 'aad')).toBe('old-token');
    const sealedNow = rotated.seal('new-token', 'aad');
    expect(sealedNow.split('.')[1]).toBe(keyIdOf(key));
    expect(createEnvelope([key]).open(sealedNow, 'aad')).toBe('new-token');
    expect(createEnvelope([key]).open(sealedWithOlder, 'aad')).toBeNull();
    expect(createEnvelope([randomBytes(32)]).open(sealedNow, 'aad')).toBeNull();
  });

  test('refuses keys that are not 32 bytes, and an empty key list', () => {
    expect(() => createEnvelope([])).toThrow();
    expect(() => createEnvelope([randomBytes(16)])).toThrow(/32 bytes/);
  });
});

describe('resolveReturnTo()', () => {
  test('dot segments that would normalise to //host are kept raw, so they still resolve on this origin', () => {
    for (const path of ['/.//evil.example', '/..//evil.example', '/%2e//evil.example']) {
      const result = resolveReturnTo(path, '/dashboard');
      expect(result.startsWith('//')).toBe(false);
      expect(new URL(result, 'https://auth.example/login').origin).toBe('https://auth.example');
    }
  });

  test.each([
    '/settings',
    '/settings?tab=profile&x=%2F%2Fevil',
    '/a/b#section',
    '/%0a', // an encoded, harmless path on this origin
    '/',
  ])('keeps the same-origin path %j', (path) => {
    expect(resolveReturnTo(path, '/dashboard')).toBe(path);
  });

  test.each([
    undefined,
    '',
    '//evil.example',
    '///evil.example',
    '/\\evil.example',
    '\\\\evil.example',
    'https://evil.example/',
    'http://localhost:3000/dashboard',
    'javascript:alert(1)',
    'evil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    ' /settings',
    `/${'a'.repeat(3000)}`,
  ])('falls back to the default for %j', (value) => {
    expect(resolveReturnTo(value, '/dashboard')).toBe('/dashboard');
  });
});

describe('sealPendingSignIn() / openPendingSignIn()', () => {
  const secret = 'test-auth-secret-0123456789';
  const now = new Date(Date.UTC(2026, 10, 22, 12));
  const pending = {
    provider: 'github',
    state: generateState(secureRandom),
    codeVerifier: generateCodeVerifier(secureRandom),
    nonce: generateNonce(secureRandom),
    returnTo: '/settings',
    expiresAt: new Date(now.getTime() + SIGN_IN_FLOW_LIFETIME_SECONDS * 1000),
  };

  test('opens what it sealed until the expiry, measured on the given clock', () => {
    const value = sealPendingSignIn(secret, pending);
    expect(openPendingSignIn(secret, value, now)).toEqual({ ok: true, pending });
    expect(openPendingSignIn(secret, value, new Date(pending.expiresAt.getTime() - 1))).toMatchObject({ ok: true });
    expect(openPendingSignIn(secret, value, pending.expiresAt)).toEqual({ ok: false, problem: 'expired' });
  });

  test('the verifier is sealed: the payload holds an envelope, never the verifier, and a fresh one each time', () => {
    const value = sealPendingSignIn(secret, pending);
    const payload = JSON.parse(Buffer.from(value.split('.')[0]!, 'base64url').toString('utf8')) as { c: string };
    expect(payload.c).toMatch(/^v1\./);
    expect(value).not.toContain(pending.codeVerifier);
    expect(Buffer.from(value.split('.')[0]!, 'base64url').toString('utf8')).not.toContain(pending.codeVerifier);
    expect(sealPendingSignIn(secret, pending)).not.toBe(value);
  });

  test('refuses a value signed with another secret, a changed payload, a missing or malformed value', () => {
    const value = sealPendingSignIn(secret, pending);
    expect(openPendingSignIn('another-secret-0123456789', value, now)).toEqual({ ok: false, problem: 'bad_signature' });
    const [payload, signature] = value.split('.');
    const forged = Buffer.from(JSON.stringify({ p: 'github', s: 'attacker', c: pending.codeVerifier, r: '/x', e: pending.expiresAt.getTime() })).toString(
      'base64url',
    );
    expect(openPendingSignIn(secret, `${forged}.${signature}`, now)).toEqual({ ok: false, problem: 'bad_signature' });
    expect(openPendingSignIn(secret, undefined, now)).toEqual({ ok: false, problem: 'missing' });
    expect(openPendingSignIn(secret, payload, now)).toEqual({ ok: false, problem: 'malformed' });
    expect(openPendingSignIn(secret, `${value}.extra`, now)).toEqual({ ok: false, problem: 'malformed' });
  });
});
