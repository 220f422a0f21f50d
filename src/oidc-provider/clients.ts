/**
 * @module What operators do with the provider's clients, the same functions behind the admin API
 * and the CLI: register a client (its secret shown once, kept as a SHA-256), change, delete it,
 * rotate its secret. Every change is audited with the operator's actor; the secret never is.
 *
 * Redirect URIs match exactly: no wildcard, no fragment. In production they are https, except a
 * loopback `http://127.0.0.1`, `http://[::1]` or `http://localhost` (a desktop app's local
 * server, whose port is free at request time) and a private-use scheme for native apps
 * (`com.example.app:/callback`, RFC 8252).
 */
import type { Operator } from '../admin/flow.js';
import type { AuditEventType, AuditMetadata } from '../audit/audit-log.js';
import { sha256Hex } from '../crypto/digest.js';
import { notFound, validationError, type ValidationIssue } from '../errors.js';
import { randomBytes, type RandomReader } from '../random.js';
import type { Stores } from '../stores.js';
import { urlProblem } from '../webhooks/send.js';
import { GRANT_NAMES, ID_TOKEN_ALGS, type GrantName, type IdTokenAlg, type OidcClient, type OidcClientChanges, type OidcClientStore } from './store.js';

/** The scopes a client may be given; `openid` always. */
export const SUPPORTED_SCOPES = ['openid', 'email', 'organizations', 'offline_access'] as const;

export interface ClientAdminDeps {
  clients: OidcClientStore;
  stores: Pick<Stores, 'audit'>;
  random: RandomReader;
  /** Production: https redirect URIs (loopback and private-use schemes aside), and the back-channel rule of webhooks. */
  production: boolean;
}

export interface ClientInput {
  name: string;
  redirectUris?: string[];
  public?: boolean;
  firstParty?: boolean;
  grantTypes?: string[];
  scopes?: string[];
  postLogoutRedirectUris?: string[];
  backchannelLogoutUri?: string | null;
  idTokenSignedResponseAlg?: string;
}

export type ClientUpdate = Partial<Omit<ClientInput, 'public'>>;

const NO_SUCH_CLIENT = 'There is no client with this id.';
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

export function isLoopbackRedirect(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/** A redirect URI's problem, or null. */
export function redirectUriProblem(value: string, production: boolean): string | null {
  if (value.includes('*')) return 'a wildcard is refused: register each URI';
  if (value.includes('#')) return 'a fragment is refused';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not an absolute URI';
  }
  if (url.username !== '' || url.password !== '') return 'credentials in the URI are refused';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') return !production || isLoopbackRedirect(url) ? null : 'https is required (http only for 127.0.0.1, [::1] or localhost)';
  // RFC 8252 §7.1: a private-use scheme is a reversed domain name the app owns.
  const scheme = url.protocol.slice(0, -1);
  if (!scheme.includes('.') || ['javascript', 'data', 'file', 'vbscript'].includes(scheme)) {
    return "a native app's scheme must be a reversed domain name it owns (com.example.app:/callback)";
  }
  return null;
}

function uniqueList(values: readonly string[] | undefined): string[] {
  return [...new Set(values ?? [])];
}

/** A client as registered: everything but what Gatehouse assigns (its id and dates). */
type Registration = Omit<OidcClient, 'clientId' | 'createdAt' | 'updatedAt'>;

/** The whole registration's problems, each at its field (the admin API's `issues`). */
export function registrationIssues(registration: Registration, production: boolean): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const add = (path: string, message: string): void => void issues.push({ path, message });
  if (registration.name.trim() === '' || registration.name.length > 100) add('name', 'a name of 1 to 100 characters');
  const needsRedirect = registration.grantTypes.includes('authorization_code');
  if (needsRedirect && registration.redirectUris.length === 0) add('redirectUris', 'at least one redirect URI for the authorization code grant');
  if (registration.redirectUris.length > 20) add('redirectUris', 'at most 20');
  registration.redirectUris.forEach((uri, index) => {
    const problem = redirectUriProblem(uri, production);
    if (problem !== null) add(`redirectUris.${index}`, problem);
  });
  registration.postLogoutRedirectUris.forEach((uri, index) => {
    const problem = redirectUriProblem(uri, production);
    if (problem !== null) add(`postLogoutRedirectUris.${index}`, problem);
  });
  for (const grant of registration.grantTypes) {
    if (!(GRANT_NAMES as readonly string[]).includes(grant)) add('grantTypes', `unknown grant ${grant} (${GRANT_NAMES.join(', ')})`);
  }
  if (registration.grantTypes.length === 0) add('grantTypes', 'at least one grant');
  if (
    registration.grantTypes.includes('refresh_token') &&
    !registration.grantTypes.includes('authorization_code') &&
    !registration.grantTypes.includes('device_code')
  ) {
    add('grantTypes', 'refresh_token comes with authorization_code or device_code');
  }
  if (registration.public && registration.grantTypes.includes('client_credentials')) add('grantTypes', 'client_credentials needs a confidential client');
  for (const scope of registration.scopes) {
    if (!(SUPPORTED_SCOPES as readonly string[]).includes(scope)) add('scopes', `unknown scope ${scope} (${SUPPORTED_SCOPES.join(', ')})`);
  }
  if (!(ID_TOKEN_ALGS as readonly string[]).includes(registration.idTokenSignedResponseAlg))
    add('idTokenSignedResponseAlg', `one of ${ID_TOKEN_ALGS.join(', ')}`);
  if (registration.backchannelLogoutUri !== null) {
    const problem = urlProblem(registration.backchannelLogoutUri, { requireHttps: production, allowPrivateNetworks: !production });
    if (problem !== null) add('backchannelLogoutUri', problem);
  }
  return issues;
}

function registrationOf(input: ClientInput): Registration {
  const grantTypes = uniqueList(input.grantTypes ?? ['authorization_code', 'refresh_token']) as GrantName[];
  return {
    name: input.name,
    public: input.public ?? false,
    firstParty: input.firstParty ?? false,
    redirectUris: uniqueList(input.redirectUris),
    postLogoutRedirectUris: uniqueList(input.postLogoutRedirectUris),
    grantTypes,
    scopes: uniqueList(input.scopes ?? [...SUPPORTED_SCOPES])
      .filter((scope) => scope !== 'openid')
      .concat('openid'),
    backchannelLogoutUri: input.backchannelLogoutUri ?? null,
    idTokenSignedResponseAlg: (input.idTokenSignedResponseAlg ?? 'ES256') as IdTokenAlg,
  };
}

/** A client secret: 32 random bytes, base64url. */
function newSecret(random: RandomReader): string {
  return Buffer.from(randomBytes(random, 32)).toString('base64url');
}

export function hashClientSecret(secret: string): string {
  return sha256Hex(secret);
}

/** An operator's change to the provider (a client, a signing key), audited with the operator's actor; `userId` null. */
export async function auditOperator(stores: Pick<Stores, 'audit'>, operator: Operator, type: AuditEventType, metadata: AuditMetadata): Promise<void> {
  await stores.audit.recordEvent({
    type,
    userId: null,
    ip: operator.ip,
    userAgent: operator.userAgent,
    metadata: { actor: operator.actor, ...metadata },
    at: operator.now,
  });
}

/** Registers a client; its secret (a confidential client's) is in the answer only. */
export async function registerClient(
  deps: ClientAdminDeps,
  operator: Operator,
  input: ClientInput,
): Promise<{ client: OidcClient; clientSecret: string | null }> {
  const registration = registrationOf(input);
  const issues = registrationIssues(registration, deps.production);
  if (issues.length > 0) throw validationError(issues, 'The client registration is not valid.');
  const client: OidcClient = {
    // Hex, not base64url: an id beginning with '-' would read as an option on the command line.
    clientId: Buffer.from(randomBytes(deps.random, 16)).toString('hex'),
    ...registration,
    createdAt: operator.now,
    updatedAt: operator.now,
  };
  const clientSecret = client.public ? null : newSecret(deps.random);
  await deps.clients.createClient(client, clientSecret === null ? null : hashClientSecret(clientSecret));
  await auditOperator(deps.stores, operator, 'oidc_client_created', { clientId: client.clientId, name: client.name, public: client.public });
  return { client, clientSecret };
}

export async function findClient(deps: Pick<ClientAdminDeps, 'clients'>, clientId: string): Promise<OidcClient> {
  const found = await deps.clients.findClient(clientId);
  if (found === null) throw notFound(NO_SUCH_CLIENT);
  return found.client;
}

export async function updateClient(deps: ClientAdminDeps, operator: Operator, clientId: string, update: ClientUpdate): Promise<OidcClient> {
  const current = await findClient(deps, clientId);
  const given: ClientUpdate = Object.fromEntries(Object.entries(update).filter(([, value]) => value !== undefined));
  const merged = registrationOf({ ...current, ...given, public: current.public });
  const issues = registrationIssues(merged, deps.production);
  if (issues.length > 0) throw validationError(issues, 'The client registration is not valid.');
  const { public: _public, ...changes } = merged;
  const updated = await deps.clients.updateClient(clientId, changes satisfies OidcClientChanges, operator.now);
  if (updated === null) throw notFound(NO_SUCH_CLIENT);
  await auditOperator(deps.stores, operator, 'oidc_client_updated', { clientId, name: updated.name, fields: Object.keys(update).sort().join(',') });
  return updated;
}

/** Deletes the client with every grant and token it holds. */
export async function deleteClient(deps: ClientAdminDeps, operator: Operator, clientId: string): Promise<void> {
  const current = await findClient(deps, clientId);
  if (!(await deps.clients.deleteClient(clientId))) throw notFound(NO_SUCH_CLIENT);
  await auditOperator(deps.stores, operator, 'oidc_client_deleted', { clientId, name: current.name });
}

/** A new secret for a confidential client; the old one stops working at once. */
export async function rotateClientSecret(deps: ClientAdminDeps, operator: Operator, clientId: string): Promise<string> {
  const current = await findClient(deps, clientId);
  if (current.public) throw validationError([{ path: 'clientId', message: 'a public client has no secret' }], 'A public client has no secret to rotate.');
  const clientSecret = newSecret(deps.random);
  if (!(await deps.clients.replaceSecret(clientId, hashClientSecret(clientSecret), operator.now))) throw notFound(NO_SUCH_CLIENT);
  await auditOperator(deps.stores, operator, 'oidc_client_secret_rotated', { clientId, name: current.name });
  return clientSecret;
}
