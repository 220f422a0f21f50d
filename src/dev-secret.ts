/**
 * @module Outside production, a missing JWT_SECRET is generated once and kept in the data
 * folder (mode 0600), so sessions survive a restart and `npm start` needs no setup. Production
 * never gets here: loadConfig refuses to start without JWT_SECRET.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';
import { createLogger, type Logger } from './logger.js';
import { PRIVATE_FILE_MODE, filesOpenToOthers, makePrivateDirectory, octalMode, writePrivateFile } from './private-files.js';
import { randomBase64url, randomBytes, secureRandom } from './random.js';

export const DEV_SECRET_FILE = 'jwt-secret';

export function withPersistedDevSecret(config: Readonly<Config>, logger: Logger): Readonly<Config> {
  if (config.jwtSecret !== null || config.mode === 'production') return config;
  const file = path.join(config.dataDir, DEV_SECRET_FILE);
  let secret: string;
  try {
    secret = fs.readFileSync(file, 'utf8').trim();
  } catch {
    secret = '';
  }
  if (secret.length < 32) {
    secret = randomBase64url(secureRandom, 48);
    makePrivateDirectory(config.dataDir);
    writePrivateFile(file, `${secret}\n`);
    logger.warn({ file }, 'JWT_SECRET is not set: generated a secret and stored it in the data folder. Set JWT_SECRET in production.');
  } else {
    // Anyone who could read the file can sign sessions for any account: close it at once (it is
    // ours, unlike the database, whose mode an operator may have chosen), and say so.
    for (const open of filesOpenToOthers([file])) {
      fs.chmodSync(file, PRIVATE_FILE_MODE);
      logger.warn(
        { file, mode: octalMode(open.mode) },
        `${file} could be read by other users (mode ${octalMode(open.mode)}); changed it to 0600. ` +
          'Anyone who read it can sign sessions: delete the file to generate a new secret (this signs everyone out).',
      );
    }
    logger.warn({ file }, 'JWT_SECRET is not set: using the generated secret from the data folder. Set JWT_SECRET in production.');
  }
  return Object.freeze({ ...config, jwtSecret: secret });
}

export const DEV_ENCRYPTION_KEY_FILE = 'encryption-key';

/**
 * Outside production without ENCRYPTION_KEY_BASE64, two-factor secrets are sealed with a key
 * generated once into the data folder (0600), so `npm start` can turn 2FA on with no setup. It
 * seals nothing else: provider tokens still need ENCRYPTION_KEY_BASE64, which production requires.
 */
export function withPersistedDevEncryptionKey(config: Readonly<Config>, logger: Logger): Readonly<Config> {
  if (config.encryptionKeys.length > 0 || config.mode === 'production') return config;
  const file = path.join(config.dataDir, DEV_ENCRYPTION_KEY_FILE);
  let key: Buffer;
  try {
    key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  } catch {
    key = Buffer.alloc(0);
  }
  if (key.length !== 32) {
    key = Buffer.from(randomBytes(secureRandom, 32));
    try {
      makePrivateDirectory(config.dataDir);
      writePrivateFile(file, `${key.toString('base64')}\n`);
    } catch (error) {
      // Not worth refusing to start over: without a kept key two-factor setup answers 503 naming
      // the variable, and everything else works (a read-only data folder, for example).
      logger.warn(
        { file, reason: error instanceof Error ? error.message : String(error) },
        'ENCRYPTION_KEY_BASE64 is not set and no key could be kept in the data folder: two-factor sign-in is off.',
      );
      return config;
    }
    logger.warn(
      { file },
      'ENCRYPTION_KEY_BASE64 is not set: generated a key for two-factor secrets in the data folder. Set ENCRYPTION_KEY_BASE64 in production.',
    );
  } else {
    for (const open of filesOpenToOthers([file])) {
      fs.chmodSync(file, PRIVATE_FILE_MODE);
      logger.warn({ file, mode: octalMode(open.mode) }, `${file} could be read by other users (mode ${octalMode(open.mode)}); changed it to 0600.`);
    }
  }
  return Object.freeze({ ...config, generatedEncryptionKey: key });
}

/**
 * What `gatehouse serve` does before it starts, for a host that embeds Gatehouse: outside
 * production, an unset JWT_SECRET and ENCRYPTION_KEY_BASE64 are generated once into the data
 * folder and read from there afterwards (so sessions survive a restart). In production the
 * configuration comes back unchanged: loadConfig already refused it without JWT_SECRET.
 */
export function withDevelopmentSecrets(config: Readonly<Config>, logger?: Logger): Readonly<Config> {
  if (config.mode === 'production') return config;
  const log = logger ?? createLogger({ level: config.logLevel });
  return withPersistedDevEncryptionKey(withPersistedDevSecret(config, log), log);
}
