#!/usr/bin/env node
// Auth0 → Gatehouse import NDJSON.
//   node tools/migrate/auth0.mjs --hashes password-hashes.json [--users users-export.json] [--provider from=to]… > users.ndjson
// --hashes: the password hash export Auth0 support sends (NDJSON: _id.$oid, alt_id?, email,
//   email_verified, passwordHash ($2b$ bcrypt), connection).
// --users: a bulk user export (POST /api/v2/jobs/users-exports, format json, fields user_id,
//   email, email_verified, created_at, blocked): adds creation times, blocked flags, and the
//   social sign-ins (user ids like github|123) of people with the same email.
import { parseArgs } from 'node:util';
import { emit, isoTime, providerName, providerRenames, readJsonOrLines, run, warn } from './lib.mjs';

/** Auth0's user id of a password-hash export row: auth0|<alt_id> when set, else auth0|<_id>. */
function hashRowUserId(row) {
  const id = row.alt_id ?? row._id?.$oid ?? row._id;
  return id ? `auth0|${id}` : undefined;
}

function emailOf(row) {
  return row.email ?? row.identifiers?.find((identifier) => identifier.type === 'email')?.value;
}

function verifiedOf(row) {
  return row.email_verified ?? row.identifiers?.find((identifier) => identifier.type === 'email')?.verified ?? false;
}

run(() => {
  const { values } = parseArgs({ options: { hashes: { type: 'string' }, users: { type: 'string' }, provider: { type: 'string', multiple: true } } });
  if (!values.hashes && !values.users) throw new Error('give --hashes FILE and/or --users FILE');
  const renames = providerRenames(values.provider);
  const people = new Map(); // lower-cased email → import line being built

  const person = (email) => {
    const key = email.toLowerCase();
    if (!people.has(key)) people.set(key, { email, emailVerified: false });
    return people.get(key);
  };

  for (const row of values.users ? [readJsonOrLines(values.users)].flat() : []) {
    const email = emailOf(row);
    if (!email || !row.user_id) {
      warn(`user ${row.user_id ?? '?'} has no email: skipped`);
      continue;
    }
    const [connection, ...rest] = String(row.user_id).split('|');
    const line = person(email);
    if (connection === 'auth0') {
      Object.assign(line, { emailVerified: Boolean(row.email_verified), externalId: row.user_id, createdAt: isoTime(row.created_at) });
      if (row.blocked) line.disabled = true;
    } else if (row.email_verified) {
      // A social sign-in joins the person with this email only when its provider verified that email.
      line.providers = [...(line.providers ?? []), { provider: providerName(connection, renames), providerUserId: rest.join('|') }];
      line.emailVerified = true;
      line.externalId ??= row.user_id;
      line.createdAt ??= isoTime(row.created_at);
    } else warn(`${row.user_id}: its provider did not verify ${email}, so it is not linked`);
  }

  for (const row of values.hashes ? [readJsonOrLines(values.hashes)].flat() : []) {
    const email = emailOf(row);
    if (!email) {
      warn(`hash row ${hashRowUserId(row) ?? '?'} has no email: skipped`);
      continue;
    }
    const line = person(email);
    line.externalId ??= hashRowUserId(row);
    line.emailVerified = line.emailVerified || Boolean(verifiedOf(row));
    if (/^\$2[aby]\$/.test(row.passwordHash ?? '')) line.password = { algorithm: 'bcrypt', hash: row.passwordHash };
    else if (row.passwordHash) warn(`${email}: unrecognised password hash, imported without a password`);
  }

  for (const line of people.values()) emit(line);
});
