#!/usr/bin/env node
// Firebase Authentication → Gatehouse import NDJSON.
//   node tools/migrate/firebase.mjs users.json --signer-key B64 --salt-separator B64 --rounds 8 --mem-cost 14 [--provider from=to]… > users.ndjson
// users.json: `firebase auth:export users.json --format=json` ({ users: [{ localId, email,
// emailVerified, passwordHash, salt, createdAt, disabled, providerUserInfo }] }). The four
// options are the project's password hash parameters (console → Authentication → Users → ⋮ →
// Password hash parameters: base64_signer_key, base64_salt_separator, rounds, mem_cost).
import { parseArgs } from 'node:util';
import { emit, isoTime, providerName, providerRenames, readJsonOrLines, run, warn } from './lib.mjs';

function hashConfig(values) {
  for (const name of ['signer-key', 'salt-separator', 'rounds', 'mem-cost']) {
    if (values[name] === undefined) throw new Error(`--${name} is required (the project's password hash parameters)`);
  }
  const rounds = Number(values.rounds);
  const memCost = Number(values['mem-cost']);
  if (!Number.isInteger(rounds) || !Number.isInteger(memCost)) throw new Error('--rounds and --mem-cost are integers');
  return { signerKey: values['signer-key'], saltSeparator: values['salt-separator'], rounds, memCost };
}

run(() => {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'signer-key': { type: 'string' },
      'salt-separator': { type: 'string' },
      rounds: { type: 'string' },
      'mem-cost': { type: 'string' },
      provider: { type: 'string', multiple: true },
    },
  });
  if (positionals.length !== 1) throw new Error('usage: firebase.mjs FILE --signer-key … --salt-separator … --rounds … --mem-cost …');
  const config = hashConfig(values);
  const renames = providerRenames(values.provider);
  const document = readJsonOrLines(positionals[0]);
  for (const user of Array.isArray(document) ? document : (document.users ?? [])) {
    if (!user.email) {
      warn(`user ${user.localId}: no email (phone or anonymous sign-in): skipped`);
      continue;
    }
    const providers = (user.providerUserInfo ?? [])
      .filter((info) => info.providerId !== 'password' && info.providerId !== 'phone')
      .map((info) => ({ provider: providerName(info.providerId, renames), providerUserId: String(info.rawId), login: info.screenName }));
    emit({
      email: user.email,
      emailVerified: Boolean(user.emailVerified),
      createdAt: isoTime(user.createdAt),
      externalId: user.localId,
      disabled: user.disabled ? true : undefined,
      password: user.passwordHash && user.salt ? { algorithm: 'firebase-scrypt', hash: user.passwordHash, salt: user.salt, ...config } : undefined,
      providers: providers.length > 0 ? providers : undefined,
    });
  }
});
