/**
 * @module Configuration: one typed, validated, frozen object built from the environment once,
 * at start. Nothing else reads `process.env`. A bad value stops the start with a message that
 * names the variable and the form it expects (DESIGN §3).
 *
 * This module is only the loader. Each capability declares its own variables beside it, in its
 * `settings.ts` (name, default, meaning, how they are read into its slice of the `Config`, and
 * its rate limits); `SETTINGS` lists them once, and the `Config`, `CONFIG_VARIABLES` (hence
 * `.env.example`) and the rate limits are all composed from that list.
 */
import { accountSettings } from './account/settings.js';
import { adminSettings } from './admin/settings.js';
import { auditSettings } from './audit/settings.js';
import { brandSettings } from './brand/settings.js';
import { credentialSettings } from './credentials/settings.js';
import { databaseSettings } from './db/settings.js';
import { emailSignInSettings } from './email-sign-in/settings.js';
import { emailVerificationSettings } from './email-verification/settings.js';
import { limitSettings } from './limits/settings.js';
import { metricsSettings } from './metrics/settings.js';
import { mfaSettings } from './mfa/settings.js';
import { providerSettings } from './oauth/settings.js';
import { i18nSettings } from './i18n/settings.js';
import { emailTemplateSettings } from './outbox/override-settings.js';
import { mailSettings } from './outbox/settings.js';
import { passkeySettings } from './passkeys/settings.js';
import { passwordResetSettings } from './password-reset/settings.js';
import { passwordSignInSettings } from './password-sign-in/settings.js';
import { readServerSettings, serverSettings } from './server-settings.js';
import { sessionSettings } from './session/settings.js';
import { userTransferSettings } from './user-transfer/settings.js';
import { webhookSettings } from './webhooks/settings.js';
import { oidcProviderSettings } from './oidc-provider/settings.js';
import { organizationSettings } from './organizations/settings.js';
import { ConfigError } from './config-error.js';
import {
  createSettingsReader,
  type Env,
  type RateLimitDeclaration,
  type RateLimitRule,
  type Settings,
  type SettingsContext,
  type SettingsReader,
  type VariableDeclaration,
} from './settings.js';

/**
 * Every declaration, in the order `.env.example` lists their variables (each one's variables,
 * then its rate limits). The server's come first: every other declaration may depend on the
 * mode and the origin they decide (`SettingsContext`).
 */
const SETTINGS = [
  serverSettings,
  databaseSettings,
  sessionSettings,
  passwordSignInSettings,
  credentialSettings,
  mailSettings,
  i18nSettings,
  emailTemplateSettings,
  brandSettings,
  accountSettings,
  mfaSettings,
  emailVerificationSettings,
  passwordResetSettings,
  emailSignInSettings,
  passkeySettings,
  providerSettings,
  adminSettings,
  userTransferSettings,
  webhookSettings,
  oidcProviderSettings,
  organizationSettings,
  metricsSettings,
  limitSettings,
  auditSettings,
] as const;

type Declared = (typeof SETTINGS)[number];
type UnionToIntersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void ? I : never;
type SliceOf<S> = S extends Settings<infer _Name, infer _Limit, infer Slice, infer _LimitVariable> ? Slice : never;
type LimitOf<S> = S extends Settings<infer _Name, infer Limit, infer _Slice, infer _LimitVariable> ? Limit : never;
type VariableOf<S> = S extends Settings<infer Name, infer _Limit, infer _Slice, infer LimitVariable> ? Name | LimitVariable : never;

/** The name of each rate limit, as its capability declares it (`passkeyLogin`, …). */
export type RateLimitName = LimitOf<Declared>;

/** Every declaration's slice, and the rate limits of all of them. */
export type Config = UnionToIntersection<SliceOf<Declared>> & {
  rateLimits: Readonly<Record<RateLimitName, RateLimitRule>>;
};

export type ConfigVariable = VariableOf<Declared>;

export type { RateLimitRule } from './settings.js';

export { ConfigError } from './config-error.js';

/** A declaration's variables, then its rate limits' (the order `.env.example` shows). */
function variablesOf(settings: Declared): readonly VariableDeclaration<ConfigVariable>[] {
  const limits: readonly RateLimitDeclaration[] = Object.values(settings.rateLimits);
  const declared = [...settings.variables, ...limits] as readonly VariableDeclaration<ConfigVariable>[];
  return declared.map(({ name, default: fallback, meaning }) => Object.freeze({ name, default: fallback, meaning }));
}

/**
 * Every environment variable Gatehouse reads, with the value that gives its default ('' when
 * unset means something a value cannot say, explained in `meaning`) and one line of meaning,
 * composed from the declarations. `.env.example` is generated from this list (`npm run
 * env-example`), each declaration's `read` can read only the names it declares, and
 * test/env-file.test.ts checks that the list holds exactly the variables read, so the three
 * cannot drift apart. docs/configuration.md says the same at more length.
 */
export const CONFIG_VARIABLES: readonly VariableDeclaration<ConfigVariable>[] = Object.freeze(SETTINGS.flatMap(variablesOf));

/** One declaration's rate limits, each from its variable or its documented default. */
function readRateLimits(settings: Declared, reader: SettingsReader<string>): Partial<Record<RateLimitName, RateLimitRule>> {
  const rules: Partial<Record<RateLimitName, RateLimitRule>> = {};
  const declared = Object.entries(settings.rateLimits) as [RateLimitName, RateLimitDeclaration][];
  for (const [limit, declaration] of declared) rules[limit] = reader.rateLimit(declaration.name, declaration.rule);
  return rules;
}

/** Reads the environment once; throws ConfigError naming every bad variable. */
export function loadConfig(env: Env): Readonly<Config> {
  const problems: string[] = [];
  const reader = createSettingsReader(env, problems);
  // The server's settings first: every other declaration may depend on the mode and the origin.
  const server = readServerSettings(reader);
  const context: SettingsContext = { mode: server.mode, baseUrl: server.baseUrl, httpsBaseUrl: server.httpsBaseUrl };
  const config: Record<string, unknown> = {};
  let rateLimits: Partial<Record<RateLimitName, RateLimitRule>> = {};
  for (const settings of SETTINGS) {
    Object.assign(config, settings === serverSettings ? server : settings.read(reader, context));
    rateLimits = { ...rateLimits, ...readRateLimits(settings, reader) };
  }
  if (problems.length > 0) throw new ConfigError(problems);
  // Each slice has the type its declaration states and `Config` is their intersection, which the
  // loop cannot show the compiler; test/config.test.ts and test/env-file.test.ts check the whole.
  return Object.freeze({ ...config, rateLimits: Object.freeze(rateLimits) } as Config);
}

/**
 * The configuration once the server is bound. With PORT=0 the system picks the port; without
 * BASE_URL the links, the allowed origin and the OAuth callback must name that port, not 0.
 */
export function withBoundPort(config: Readonly<Config>, boundPort: number): Readonly<Config> {
  // `http://localhost:0` is what an unset BASE_URL gives with PORT=0, and no browser can reach it.
  if (config.port !== 0 || config.baseUrl !== 'http://localhost:0') return config;
  return Object.freeze({ ...config, port: boundPort, baseUrl: `http://localhost:${boundPort}` });
}
