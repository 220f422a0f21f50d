#!/usr/bin/env node
// Supabase → Gatehouse import NDJSON.
//   node tools/migrate/supabase.mjs supabase-users.json [--provider from=to]… > users.ndjson
// The input is the JSON array the query in docs/migrating.md prints (rows of auth.users with
// their auth.identities): id, email, encrypted_password (bcrypt $2a$), email_confirmed_at,
// created_at, banned_until, deleted_at, is_anonymous, identities [{ provider, provider_id }].
import { parseArgs } from 'node:util';
import { emit, isoTime, providerName, providerRenames, readJsonOrLines, run, warn } from './lib.mjs';

run(() => {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { provider: { type: 'string', multiple: true } } });
  if (positionals.length !== 1) throw new Error('usage: supabase.mjs FILE (- for stdin)');
  const renames = providerRenames(values.provider);
  const now = Date.now();
  for (const row of [readJsonOrLines(positionals[0])].flat()) {
    if (!row.email || row.is_anonymous || row.deleted_at) {
      warn(`user ${row.id}: no email, anonymous or deleted: skipped`);
      continue;
    }
    const identities = typeof row.identities === 'string' ? JSON.parse(row.identities) : (row.identities ?? []);
    const providers = identities
      // The "email" identity is the password account itself, not a provider link.
      .filter((identity) => identity.provider !== 'email' && identity.provider !== 'phone')
      .map((identity) => ({ provider: providerName(identity.provider, renames), providerUserId: String(identity.provider_id ?? identity.id) }));
    const banned = row.banned_until && new Date(row.banned_until).getTime() > now;
    const hash = row.encrypted_password;
    if (hash && !/^\$2[aby]\$/.test(hash)) warn(`${row.email}: unrecognised password hash, imported without a password`);
    emit({
      email: row.email,
      emailVerified: Boolean(row.email_confirmed_at),
      createdAt: isoTime(row.created_at),
      externalId: row.id,
      disabled: banned ? true : undefined,
      password: hash && /^\$2[aby]\$/.test(hash) ? { algorithm: 'bcrypt', hash } : undefined,
      providers: providers.length > 0 ? providers : undefined,
    });
  }
});
