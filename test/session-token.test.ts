/**
 * The session token codec through its own interface: what it remembers of tokens it has seen
 * (src/session/token.ts) never changes a verdict — expiry follows the clock given on each call,
 * refusals stay refusals, and past the bound the oldest tokens are verified afresh.
 */
import { SignJWT } from 'jose';
import { describe, expect, test } from 'vitest';
import { createSessionTokenCodec } from '../src/session/token.js';

const SECRET = 'session-token-test-secret-0123456789-0123456789';
const issuedAt = new Date('2026-11-22T10:00:00Z');
const expiresAt = new Date('2026-11-22T11:00:00Z');

describe('session token codec', () => {
  const codec = createSessionTokenCodec(SECRET);
  const sign = (sessionId: string) => codec.sign({ userId: 'user-1', sessionId, issuedAt, expiresAt });

  test('a token verified once is still refused once the given clock passes its expiry', () => {
    const token = sign('s-expiry');
    expect(codec.verify(token, new Date(expiresAt.getTime() - 1000))).toEqual({ userId: 'user-1', sessionId: 's-expiry', issuedAt, expiresAt });
    expect(codec.verify(token, expiresAt)).toBeNull();
    // ...and an earlier instant (a clock moved back in a test) accepts it again: nothing is stuck.
    expect(codec.verify(token, issuedAt)?.sessionId).toBe('s-expiry');
  });

  test('a token signed with another key is refused every time, and a genuine one beside it is accepted', async () => {
    const forged = await new SignJWT({ sub: 'user-1', sid: 's-forged', iat: issuedAt.getTime() / 1000, exp: expiresAt.getTime() / 1000 })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode('another-secret-0123456789-0123456789-0123'));
    const genuine = sign('s-genuine');
    for (let round = 0; round < 3; round++) {
      expect(codec.verify(forged, issuedAt)).toBeNull();
      expect(codec.verify(genuine, issuedAt)?.sessionId).toBe('s-genuine');
    }
  });

  test('past the bound on remembered tokens, the oldest are verified afresh with the same verdict', () => {
    const first = sign('s-first');
    expect(codec.verify(first, issuedAt)?.sessionId).toBe('s-first');
    for (let i = 0; i < 3000; i++) expect(codec.verify(sign(`s-${i}`), issuedAt)?.sessionId).toBe(`s-${i}`);
    expect(codec.verify(first, issuedAt)?.sessionId).toBe('s-first');
    // One character changed in the middle of the signature (the last one carries padding bits).
    const at = first.length - 20;
    const tampered = `${first.slice(0, at)}${first[at] === 'A' ? 'B' : 'A'}${first.slice(at + 1)}`;
    expect(codec.verify(tampered, issuedAt)).toBeNull();
  });

  test('a cookie that is not a compact JWT is refused without reaching the verifier', () => {
    for (const value of ['', 'not.a.jwt', 'a.b.c', 'eyJ.', `eyJ${'a'.repeat(3000)}.b.c`, 'eyJhbGciOiJub25lIn0.e30.']) {
      expect(codec.verify(value, issuedAt), value.slice(0, 20)).toBeNull();
    }
  });
});
