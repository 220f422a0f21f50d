#!/usr/bin/env node
// Keycloak → Gatehouse import NDJSON.
//   node tools/migrate/keycloak.mjs myrealm-realm.json [myrealm-users-0.json …] [--provider from=to]… > users.ndjson
// Input: the realm export of `kc.sh export --dir DIR --realm myrealm` (users in the realm file,
// or in myrealm-users-N.json with --users different_files). Each user: id, email,
// emailVerified, enabled, createdTimestamp, federatedIdentities [{ identityProvider, userId,
// userName }], credentials [{ type: "password", secretData, credentialData }] where secretData
// is the JSON text { value: base64 hash, salt: base64 salt } and credentialData the JSON text
// { hashIterations, algorithm: pbkdf2-sha256 | pbkdf2-sha512 | argon2, additionalParameters }.
import { parseArgs } from 'node:util';
import { emit, isoTime, providerName, providerRenames, readJsonOrLines, run, warn } from './lib.mjs';

const unpad = (base64) => base64.replace(/=+$/, '');
const parameter = (parameters, name) => [parameters?.[name]].flat()[0];

/** A Keycloak password credential as an import password (PHC string), or why it cannot be. */
function keycloakPassword(credential) {
  const secret = JSON.parse(credential.secretData);
  const data = JSON.parse(credential.credentialData);
  const salt = unpad(secret.salt);
  const hash = unpad(secret.value);
  if (data.algorithm === 'pbkdf2-sha256' || data.algorithm === 'pbkdf2-sha512') {
    return { password: { algorithm: data.algorithm, hash: `$${data.algorithm}$i=${data.hashIterations}$${salt}$${hash}` } };
  }
  if (data.algorithm === 'argon2') {
    const extra = data.additionalParameters ?? {};
    const type = parameter(extra, 'type') ?? 'id';
    if (type !== 'id' && type !== 'i') return { none: `argon2${type} is not imported` };
    const version = parameter(extra, 'version') === '1.0' ? 16 : 19;
    const memory = parameter(extra, 'memory') ?? '7168';
    const parallelism = parameter(extra, 'parallelism') ?? '1';
    return {
      password: { algorithm: `argon2${type}`, hash: `$argon2${type}$v=${version}$m=${memory},t=${data.hashIterations},p=${parallelism}$${salt}$${hash}` },
    };
  }
  return { none: `${data.algorithm} hashes are not imported` };
}

run(() => {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { provider: { type: 'string', multiple: true } } });
  if (positionals.length === 0) throw new Error('usage: keycloak.mjs REALM.json [USERS-N.json …]');
  const renames = providerRenames(values.provider);
  for (const file of positionals) {
    for (const user of readJsonOrLines(file).users ?? []) {
      if (!user.email) {
        warn(`user ${user.username ?? user.id}: no email: skipped`);
        continue;
      }
      const credential = (user.credentials ?? []).find((candidate) => candidate.type === 'password');
      const converted = credential ? keycloakPassword(credential) : {};
      if (converted.none) warn(`${user.email}: ${converted.none}: imported without a password`);
      const providers = (user.federatedIdentities ?? []).map((identity) => ({
        provider: providerName(identity.identityProvider, renames),
        providerUserId: String(identity.userId),
        login: identity.userName,
      }));
      emit({
        email: user.email,
        emailVerified: Boolean(user.emailVerified),
        createdAt: isoTime(user.createdTimestamp),
        externalId: user.id,
        disabled: user.enabled === false ? true : undefined,
        password: converted.password,
        providers: providers.length > 0 ? providers : undefined,
      });
    }
  }
});
