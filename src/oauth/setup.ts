/**
 * @module Builds the provider flow's dependencies from the configuration: one slot per sign-in
 * provider (GitHub, then each id of OIDC_PROVIDERS in its order), each holding its provider or the
 * problems that name its missing or malformed variables, and the signing secret and token
 * envelope they share. A provider that is off answers 503 naming its variables; the others and the
 * rest of the service run regardless.
 */
import type { Config } from '../config.js';
import { createEnvelope } from '../crypto/envelope.js';
import type { OAuthSetup, ProviderSlot } from './flow.js';
import type { FetchFunction, ProviderHTTPOptions } from './http.js';
import type { OAuthProvider } from './provider.js';
import { createGitHubProvider } from './providers/github.js';
import { createOidcProvider } from './providers/oidc.js';

/** A few seconds: a stalled provider must not hold a sign-in (and a server connection) open. */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 5000;

export interface ProviderHTTPSettings {
  /** Defaults to the global fetch; tests may pass another. */
  fetch?: FetchFunction;
  timeoutMs?: number;
}

type ProviderListConfig = Pick<Config, 'github' | 'oidcProviders' | 'oauthProblems'>;
type ProviderConfig = ProviderListConfig & Pick<Config, 'authSecret' | 'encryptionKeys'>;

/** A sign-in provider as the configuration describes it; `problems` is empty when it can be used. */
export interface SignInProviderDescription {
  id: string;
  name: string;
  problems: readonly string[];
  build(http: ProviderHTTPOptions): OAuthProvider | null;
}

/** Every provider with routes, in the order the login page lists them: GitHub first, then OIDC_PROVIDERS. */
export function describeSignInProviders(config: ProviderListConfig): SignInProviderDescription[] {
  const github = config.github;
  return [
    {
      id: 'github',
      name: 'GitHub',
      problems: config.oauthProblems,
      build: (http) => (github === null ? null : createGitHubProvider(github, http)),
    },
    ...config.oidcProviders.map((setting): SignInProviderDescription => ({
      id: setting.id,
      name: setting.name,
      problems: setting.problems,
      build: (http) => (setting.config === null ? null : createOidcProvider({ id: setting.id, displayName: setting.name, config: setting.config, http })),
    })),
  ];
}

/** The providers a person can sign in with right now (what `GET /providers` and the login page list). */
export function usableSignInProviders(config: ProviderListConfig): { id: string; name: string }[] {
  return describeSignInProviders(config)
    .filter((description) => description.problems.length === 0)
    .map(({ id, name }) => ({ id, name }));
}

export function createOAuthSetup(config: ProviderConfig, settings: ProviderHTTPSettings = {}): OAuthSetup {
  const http = {
    fetch: settings.fetch ?? ((input, init) => fetch(input, init)),
    timeoutMs: settings.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS,
  } satisfies Required<ProviderHTTPSettings>;
  const providers = new Map<string, ProviderSlot>();
  for (const description of describeSignInProviders(config)) {
    const provider = description.problems.length === 0 ? description.build(http) : null;
    providers.set(description.id, { id: description.id, displayName: description.name, provider, problems: description.problems });
  }
  // Each provider's problems include these two variables', so no provider is usable without them.
  const secrets =
    config.authSecret === null || config.encryptionKeys.length === 0
      ? null
      : { authSecret: config.authSecret, envelope: createEnvelope(config.encryptionKeys) };
  return { providers, secrets };
}
