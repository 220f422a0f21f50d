#!/usr/bin/env node
// WordPress → Gatehouse import NDJSON.
//   node tools/migrate/wordpress.mjs users.tsv [--email-verified] > users.ndjson
// users.tsv: the tab-separated output (header line first) of
//   wp db query "SELECT ID, user_email, user_pass, user_registered FROM wp_users" > users.tsv
// user_pass is phpass ($P$) before WordPress 6.8, plain bcrypt ($2y$) from some plugins, and
// $wp$2y$… from WordPress 6.8 on: bcrypt of base64(HMAC-SHA384(key "wp-sha384", password)),
// which is not standard bcrypt of the password and cannot be imported (those people set a
// new password by reset; see docs/migrating.md).
import { parseArgs } from 'node:util';
import { emit, isoTime, readText, run, warn } from './lib.mjs';

/** The mysql client's batch output escapes \t, \n and \\ inside values; NULL is the text NULL. */
function unescapeField(value) {
  if (value === 'NULL') return null;
  return value.replace(/\\([tn0\\])/g, (_, c) => ({ t: '\t', n: '\n', 0: '\0', '\\': '\\' })[c]);
}

function wordpressPassword(userPass) {
  if (!userPass) return { none: 'no password' };
  if (/^\$[PH]\$/.test(userPass)) return { password: { algorithm: 'phpass', hash: userPass } };
  if (/^\$2[aby]\$/.test(userPass)) return { password: { algorithm: 'bcrypt', hash: userPass } };
  if (userPass.startsWith('$wp$')) return { none: 'a WordPress 6.8 hash ($wp$) bcrypts an HMAC-SHA384 of the password, not the password' };
  if (/^[0-9a-f]{32}$/i.test(userPass)) return { none: 'an unsalted MD5 hash' };
  return { none: 'an unrecognised hash' };
}

run(() => {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { 'email-verified': { type: 'boolean' } } });
  if (positionals.length !== 1) throw new Error('usage: wordpress.mjs USERS.tsv [--email-verified]');
  const [header, ...lines] = readText(positionals[0]).replace(/\r/g, '').split('\n').filter(Boolean);
  const columns = header.split('\t');
  for (const name of ['ID', 'user_email', 'user_pass']) if (!columns.includes(name)) throw new Error(`the header line has no ${name} column`);
  for (const line of lines) {
    const row = Object.fromEntries(line.split('\t').map((value, index) => [columns[index], unescapeField(value)]));
    if (!row.user_email) {
      warn(`user ${row.ID}: no email: skipped`);
      continue;
    }
    const converted = wordpressPassword(row.user_pass);
    if (converted.none) warn(`${row.user_email}: ${converted.none}: imported without a password`);
    emit({
      email: row.user_email,
      emailVerified: Boolean(values['email-verified']),
      // user_registered is stored in UTC, without a zone.
      createdAt: row.user_registered && !row.user_registered.startsWith('0000') ? isoTime(row.user_registered.replace(' ', 'T') + 'Z') : undefined,
      externalId: row.ID,
      password: converted.password,
    });
  }
});
