/**
 * @module Builds the provider flow's dependencies from the configuration: the built-in
 * providers, the signing secret and the token envelope — or nothing, with the problems that
 * name the missing variables, when any is unset (the rest of the service runs regardless).
 */
import type { Config } from '../config.js';
import { createEnvelope } from '../crypto/envelope.js';
import type { OAuthSetup } from './flow.js';
import type { FetchFunction } from './http.js';
import type { OAuthProvider } from './provider.js';
import { createGitHubProvider } from './providers/github.js';

export const BUILT_IN_PROVIDERS = ['github'] as const;

/** A few seconds: a stalled provider must not hold a sign-in (and a server connection) open. */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 5000;

export interface ProviderHTTPSettings {
  /** Defaults to the global fetch; tests may pass another. */
  fetch?: FetchFunction;
  timeoutMs?: number;
}

export function createOAuthSetup(
  config: Pick<Config, 'github' | 'authSecret' | 'encryptionKeys' | 'oauthProblems'>,
  settings: ProviderHTTPSettings = {},
): OAuthSetup | null {
  if (config.oauthProblems.length > 0 || config.github === null || config.authSecret === null || config.encryptionKeys.length === 0) {
    return null;
  }
  const http = {
    fetch: settings.fetch ?? ((input, init) => fetch(input, init)),
    timeoutMs: settings.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS,
  } satisfies Required<ProviderHTTPSettings>;
  const providers = new Map<string, OAuthProvider>([['github', createGitHubProvider(config.github, http)]]);
  return { providers, authSecret: config.authSecret, envelope: createEnvelope(config.encryptionKeys) };
}
