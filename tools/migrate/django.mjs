#!/usr/bin/env node
// Django → Gatehouse import NDJSON.
//   node tools/migrate/django.mjs users.json [--email-addresses emailaddress.json] [--social-accounts socialaccount.json] [--email-verified] [--provider from=to]… > users.ndjson
// users.json: `python manage.py dumpdata auth.user` (or your custom user model), rows
// { model, pk, fields: { password, email, is_active, date_joined } }. With django-allauth,
// `dumpdata account.emailaddress` marks verified emails and `dumpdata socialaccount.socialaccount`
// gives the provider links. Without allauth Django records no verification:
// --email-verified marks every email verified (only when your sign-up proved the mailbox).
import { parseArgs } from 'node:util';
import { emit, isoTime, phcBase64, providerName, providerRenames, readJsonOrLines, run, warn } from './lib.mjs';

/** Django's encoded password as an import password, or a reason it cannot be imported. */
function djangoPassword(encoded) {
  if (!encoded || encoded.startsWith('!')) return { none: 'no usable password' };
  const [algorithm] = encoded.split('$', 1);
  if (algorithm === 'pbkdf2_sha256') return { password: { algorithm: 'django-pbkdf2-sha256', hash: encoded } };
  // Argon2PasswordHasher: "argon2" + the argon2-cffi PHC string.
  if (algorithm === 'argon2') {
    const phc = encoded.slice('argon2'.length);
    const variant = /^\$(argon2id|argon2i)\$/.exec(phc)?.[1];
    return variant ? { password: { algorithm: variant, hash: phc } } : { none: 'argon2d is not imported' };
  }
  // BCryptPasswordHasher: plain bcrypt of the password ("bcrypt$" + the bcrypt string).
  if (algorithm === 'bcrypt') return { password: { algorithm: 'bcrypt', hash: encoded.slice('bcrypt$'.length) } };
  // ScryptPasswordHasher: scrypt$N$salt$r$p$base64(64-byte key); the salt is text, used as its UTF-8 bytes.
  if (algorithm === 'scrypt') {
    const [, n, salt, r, p, key] = encoded.split('$');
    const ln = Math.log2(Number(n));
    if (!Number.isInteger(ln) || !key) return { none: 'malformed scrypt hash' };
    return { password: { algorithm: 'scrypt', hash: `$scrypt$ln=${ln},r=${r},p=${p}$${phcBase64(Buffer.from(salt, 'utf8'))}$${key.replace(/=+$/, '')}` } };
  }
  if (algorithm === 'bcrypt_sha256') return { none: 'bcrypt_sha256 bcrypts a SHA-256 digest of the password, not the password' };
  return { none: `${algorithm} hashes are not imported` };
}

function byUser(rows) {
  const map = new Map();
  for (const row of rows) map.set(row.fields.user, [...(map.get(row.fields.user) ?? []), row.fields]);
  return map;
}

run(() => {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'email-addresses': { type: 'string' },
      'social-accounts': { type: 'string' },
      'email-verified': { type: 'boolean' },
      provider: { type: 'string', multiple: true },
    },
  });
  if (positionals.length !== 1) throw new Error('usage: django.mjs USERS.json [--email-addresses F] [--social-accounts F] [--email-verified]');
  const renames = providerRenames(values.provider);
  const addresses = byUser(values['email-addresses'] ? readJsonOrLines(values['email-addresses']) : []);
  const social = byUser(values['social-accounts'] ? readJsonOrLines(values['social-accounts']) : []);
  for (const row of readJsonOrLines(positionals[0])) {
    const { fields } = row;
    if (!fields.email) {
      warn(`user ${row.pk} (${fields.username ?? ''}): no email: skipped`);
      continue;
    }
    const converted = djangoPassword(fields.password);
    if (converted.none && converted.none !== 'no usable password') warn(`${fields.email}: ${converted.none}: imported without a password`);
    const verified = (addresses.get(row.pk) ?? []).some((address) => address.verified && address.email.toLowerCase() === fields.email.toLowerCase());
    const providers = (social.get(row.pk) ?? []).map((account) => ({ provider: providerName(account.provider, renames), providerUserId: String(account.uid) }));
    emit({
      email: fields.email,
      emailVerified: verified || Boolean(values['email-verified']),
      createdAt: isoTime(fields.date_joined),
      externalId: String(row.pk),
      disabled: fields.is_active === false ? true : undefined,
      password: converted.password,
      providers: providers.length > 0 ? providers : undefined,
    });
  }
});
