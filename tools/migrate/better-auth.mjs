#!/usr/bin/env node
// Better Auth → Gatehouse import NDJSON.
//   node tools/migrate/better-auth.mjs better-auth-users.json [--provider from=to]… > users.ndjson
// Input: the JSON array the query in docs/migrating.md prints: the "user" table's id, email,
// emailVerified, createdAt, banned, with accounts [{ providerId, accountId, password }] from
// the "account" table (psql's json_agg, or sqlite3 -json, where accounts is JSON text).
//
// Better Auth's password ("credential" account) is "<salt>:<key>", both hex: the key is
// scrypt(NFKC(password), salt, N=16384, r=16, p=1, dkLen=64) where the salt passed to scrypt is
// the 32-character hex text itself (its ASCII bytes), not the 16 bytes it spells. The PHC
// scrypt string therefore carries base64(ASCII of the hex salt) and base64(the key bytes).
import { parseArgs } from 'node:util';
import { emit, isoTime, phcBase64, providerName, providerRenames, readJsonOrLines, run, warn } from './lib.mjs';

function betterAuthPassword(stored) {
  const match = /^([0-9a-f]+):([0-9a-f]+)$/i.exec(stored ?? '');
  if (!match) return { none: 'not a Better Auth scrypt hash (salt:key in hex)' };
  const [, salt, key] = match;
  return { password: { algorithm: 'scrypt', hash: `$scrypt$ln=14,r=16,p=1$${phcBase64(Buffer.from(salt, 'ascii'))}$${phcBase64(Buffer.from(key, 'hex'))}` } };
}

run(() => {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { provider: { type: 'string', multiple: true } } });
  if (positionals.length !== 1) throw new Error('usage: better-auth.mjs FILE (- for stdin)');
  const renames = providerRenames(values.provider);
  for (const row of [readJsonOrLines(positionals[0])].flat()) {
    if (!row.email) {
      warn(`user ${row.id}: no email: skipped`);
      continue;
    }
    const accounts = (typeof row.accounts === 'string' ? JSON.parse(row.accounts) : (row.accounts ?? [])).filter(Boolean);
    const credential = accounts.find((account) => account.providerId === 'credential' && account.password);
    const converted = credential ? betterAuthPassword(credential.password) : {};
    if (converted.none) warn(`${row.email}: ${converted.none}: imported without a password`);
    const providers = accounts
      .filter((account) => account.providerId !== 'credential')
      .map((account) => ({ provider: providerName(account.providerId, renames), providerUserId: String(account.accountId) }));
    emit({
      email: row.email,
      // SQLite stores booleans as 0/1.
      emailVerified: row.emailVerified === true || row.emailVerified === 1,
      createdAt: isoTime(row.createdAt),
      externalId: row.id,
      disabled: row.banned === true || row.banned === 1 ? true : undefined,
      password: converted.password,
      providers: providers.length > 0 ? providers : undefined,
    });
  }
});
