import fs from 'node:fs';
import bcrypt from 'bcrypt';
import { afterAll, describe, expect, test } from 'vitest';
import { AppError } from '../src/errors.js';
import { createHashPool } from '../src/credentials/hash-pool.js';
import { createBcryptHasher } from '../src/credentials/hasher.js';
import { checkPasswordRules } from '../src/credentials/rules.js';

const pool = createHashPool();
afterAll(() => pool.close());

describe('createBcryptHasher()', () => {
  test('production parameters: a bcrypt hash at cost 10 that verifies only its own password', async () => {
    const hasher = createBcryptHasher({ rounds: 10, pool });
    const hash = await hasher.hash('Correct-Horse-9');
    expect(hash).toMatch(/^\$2b\$10\$/);
    expect(bcrypt.getRounds(hash)).toBe(10);
    expect(await hasher.verify('Correct-Horse-9', hash)).toBe(true);
    expect(await hasher.verify('Correct-Horse-8', hash)).toBe(false);
  });

  test('no silent truncation at 72 bytes', async () => {
    const hasher = createBcryptHasher({ rounds: 4, pool });
    const prefix = 'Aa1!'.repeat(30); // 120 bytes
    const hash = await hasher.hash(`${prefix}a`);
    expect(await hasher.verify(`${prefix}b`, hash)).toBe(false);
    // the plain bcrypt library would have accepted it: that is the bug this avoids
    const plain = await bcrypt.hash(`${prefix}a`, 4);
    expect(await bcrypt.compare(`${prefix}b`, plain)).toBe(true);
  });

  test('a null hash (unknown email) is never a match', async () => {
    const hasher = createBcryptHasher({ rounds: 4, pool });
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

describe('createHashPool()', () => {
  test('hashes on its worker threads, compatible with the bcrypt library', async () => {
    const hashes = await Promise.all(['a', 'b', 'c', 'd'].map((secret) => pool.hash(secret, 4)));
    for (const [i, secret] of ['a', 'b', 'c', 'd'].entries()) {
      expect(await bcrypt.compare(secret, hashes[i]!)).toBe(true);
      expect(await pool.compare(secret, hashes[i]!)).toBe(true);
    }
    expect(await pool.compare('z', hashes[0]!)).toBe(false);
  });

  test('runs its threads at a lower scheduling priority (nice 10) than the event loop', async () => {
    if (!fs.existsSync('/proc/self/task')) return;
    const own = createHashPool({ size: 2 });
    try {
      await Promise.all([own.hash('x', 4), own.hash('y', 4)]);
      const nices = fs.readdirSync('/proc/self/task').map((tid) => {
        const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      });
      expect(nices.filter((nice) => nice === 10).length).toBeGreaterThanOrEqual(2);
      expect(Number(fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[16])).toBe(0);
    } finally {
      await own.close();
    }
  });

  test('a full queue refuses at once with 503 service_unavailable instead of waiting', async () => {
    const small = createHashPool({ size: 1, maxQueue: 1 });
    try {
      const running = small.hash('a', 8);
      const queued = small.hash('b', 8);
      const refused = small.hash('c', 8);
      await expect(refused).rejects.toBeInstanceOf(AppError);
      await expect(refused).rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
      expect(await running).toMatch(/^\$2b\$08\$/);
      expect(await queued).toMatch(/^\$2b\$08\$/);
    } finally {
      await small.close();
    }
  });

  test('close() refuses what is still queued and lets a running hash finish (never kills a thread inside bcrypt)', async () => {
    const small = createHashPool({ size: 1 });
    const first = small.hash('a', 10);
    const second = expect(small.hash('b', 10)).rejects.toMatchObject({ code: 'service_unavailable' });
    await small.close();
    await second;
    expect(await first).toMatch(/^\$2b\$10\$/);
    await expect(small.hash('c', 4)).rejects.toMatchObject({ code: 'service_unavailable' });
  });
});
