import bcrypt from 'bcrypt';
import { describe, expect, test } from 'vitest';
import { createBcryptHasher } from '../src/password/hasher.js';
import { checkPasswordRules } from '../src/password/rules.js';

describe('createBcryptHasher()', () => {
  test('production parameters: a bcrypt hash at cost 10 that verifies only its own password', async () => {
    const hasher = createBcryptHasher({ rounds: 10 });
    const hash = await hasher.hash('Correct-Horse-9');
    expect(hash).toMatch(/^\$2b\$10\$/);
    expect(bcrypt.getRounds(hash)).toBe(10);
    expect(await hasher.verify('Correct-Horse-9', hash)).toBe(true);
    expect(await hasher.verify('Correct-Horse-8', hash)).toBe(false);
  });

  test('no silent truncation at 72 bytes', async () => {
    const hasher = createBcryptHasher({ rounds: 4 });
    const prefix = 'Aa1!'.repeat(30); // 120 bytes
    const hash = await hasher.hash(`${prefix}a`);
    expect(await hasher.verify(`${prefix}b`, hash)).toBe(false);
    // the plain bcrypt library would have accepted it: that is the bug this avoids
    const plain = await bcrypt.hash(`${prefix}a`, 4);
    expect(await bcrypt.compare(`${prefix}b`, plain)).toBe(true);
  });

  test('a null hash (unknown email) is never a match', async () => {
    const hasher = createBcryptHasher({ rounds: 4 });
    expect(await hasher.verify('anything', null)).toBe(false);
  });
});

describe('checkPasswordRules()', () => {
  test('counts code points, not UTF-16 units: 8 emoji-bearing characters are 8', () => {
    expect(checkPasswordRules('Aa1😀😀😀😀😀')).toEqual([]);
    expect(checkPasswordRules('Aa1😀😀😀😀')).toEqual(['must be at least 8 characters']);
  });
  test('letters of any script count for case', () => {
    expect(checkPasswordRules('Ωmega-пароль1')).toEqual([]);
  });
});
