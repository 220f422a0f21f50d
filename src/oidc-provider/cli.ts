/**
 * @module `gatehouse clients …` and `gatehouse keys …`: the operators' OpenID Connect tools. The
 * client commands call the same functions as the admin API (clients.ts), so both refuse the same
 * registrations and write the same audit rows (actor `cli`). The key commands work on the
 * database the servers read: a rotation publishes new keys at once and, after
 * OIDC_KEY_ROTATION_DELAY, the servers sign with them, so verifiers that cache the JWKS have
 * fetched the new keys before a token needs them.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Operator } from '../admin/flow.js';
import { UsageError } from '../admin/cli.js';
import type { CliCommand } from '../capability.js';
import { systemClock } from '../clock.js';
import { ConfigError, type Config } from '../config.js';
import { createEnvelope, type Envelope } from '../crypto/envelope.js';
import { migrateToLatest, openDatabase } from '../db/connect.js';
import { createOidcClientStore } from '../db/oidc-client-store.js';
import { createOidcKeyStore } from '../db/oidc-key-store.js';
import { createStores } from '../db/stores.js';
import { withPersistedDevEncryptionKey } from '../dev-secret.js';
import { AppError, notFound, validationError } from '../errors.js';
import { chooseLogFormat, createCliLogger } from '../logger.js';
import { secureRandom } from '../random.js';
import type { Stores } from '../stores.js';
import { createClientBody, isClientId, updateClientBody } from './admin-routes.js';
import {
  auditOperator,
  deleteClient,
  findClient,
  registerClient,
  rotateClientSecret,
  updateClient,
  type ClientAdminDeps,
  type ClientInput,
} from './clients.js';
import { makeKeyPairSet, retireSigningKey } from './keys.js';
import type { OidcClient, OidcKeyStore, OidcSigningKey } from './store.js';

const CLIENT_OPTIONS_USAGE = `[--redirect-uri U]… [--grant G]… [--scope S]…
        [--post-logout-redirect-uri U]… [--backchannel-logout-uri U] [--id-token-alg ES256|RS256]`;

export const CLIENTS_USAGE = `Usage: gatehouse clients <command> [options]

  list                                  the registered OpenID Connect clients
  show ID                               one client, in full
  create --name N [--public] [--first-party] ${CLIENT_OPTIONS_USAGE}
                                        register a client; prints its client_id and, for a
                                        confidential client, its client_secret (shown once)
  update ID [--name N] [--first-party|--no-first-party] [--no-backchannel-logout-uri] ${CLIENT_OPTIONS_USAGE}
                                        change a client; a list option given replaces the whole list
  delete ID                             delete a client with every grant and token it holds
  rotate-secret ID                      a new client_secret (shown once); the old one stops working

  --grant: authorization_code (default, with refresh_token), refresh_token, client_credentials, device_code
  --scope: openid (always), email, organizations, offline_access (default: all)`;

export const KEYS_USAGE = `Usage: gatehouse keys <command> [options]

  list                                  the signing keys: kid, algorithm, created, signs from, status
  rotate [--now]                        new ES256 and RS256 keys, published at once; they sign after
                                        OIDC_KEY_ROTATION_DELAY (--now: at once)
  retire KID                            stop publishing a key (each algorithm keeps at least one)`;

type Options = NonNullable<ParseArgsConfig['options']>;
type Parsed = ReturnType<typeof parseArgs>;

function parse(args: readonly string[], options: Options, usage: string): Parsed {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message, usage);
  }
}

function oneId(positionals: string[], command: string, usage: string, valid: (id: string) => boolean, what: string): string {
  const [id] = positionals;
  if (positionals.length !== 1 || id === undefined || !valid(id)) throw new UsageError(`${command} takes ${what}.`, usage);
  return id;
}

const print = (line: string): void => console.log(line);

async function withDatabase(
  config: Readonly<Config>,
  work: (parts: { kysely: ReturnType<typeof openDatabase>['kysely']; stores: Stores }) => Promise<void>,
): Promise<void> {
  const database = openDatabase(config.database, { queryTimeoutMs: config.databaseQueryTimeoutMs });
  try {
    if (config.migrateOnStart) await migrateToLatest(database);
    await work({ kysely: database.kysely, stores: createStores(database.kysely, database.dialect) });
  } finally {
    await database.close();
  }
}

// The user agent the other commands' audit rows carry (admin/cli.ts), so one filter finds them all.
const operatorNow = (): Operator => ({ actor: 'cli', ip: null, userAgent: 'gatehouse-cli', now: systemClock.now() });

// --- clients ---------------------------------------------------------------------------------

const LIST_OPTIONS: Record<string, keyof ClientInput> = {
  'redirect-uri': 'redirectUris',
  grant: 'grantTypes',
  scope: 'scopes',
  'post-logout-redirect-uri': 'postLogoutRedirectUris',
};
const CLIENT_OPTIONS: Options = {
  name: { type: 'string' },
  'first-party': { type: 'boolean' },
  'backchannel-logout-uri': { type: 'string' },
  'id-token-alg': { type: 'string' },
  ...Object.fromEntries(Object.keys(LIST_OPTIONS).map((option) => [option, { type: 'string', multiple: true }])),
};
/** The option a field of the body (or of a validation issue's path) came from. */
const OPTION_OF: Record<string, string> = {
  ...Object.fromEntries(Object.entries(LIST_OPTIONS).map(([option, field]) => [field, option])),
  name: 'name',
  public: 'public',
  firstParty: 'first-party',
  backchannelLogoutUri: 'backchannel-logout-uri',
  idTokenSignedResponseAlg: 'id-token-alg',
};

function optionOf(path: string): string {
  const [field = '', index] = path.split('.');
  const option = `--${OPTION_OF[field] ?? field}`;
  return index === undefined ? option : `${option} #${Number(index) + 1}`;
}

/** The body the options make: only what was given, so an update changes only that. */
function clientBodyOf(values: Parsed['values']): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [option, field] of Object.entries(LIST_OPTIONS)) if (values[option] !== undefined) body[field] = values[option];
  if (values.name !== undefined) body.name = values.name;
  if (values.public === true) body.public = true;
  if (values['first-party'] === true) body.firstParty = true;
  if (values['no-first-party'] === true) body.firstParty = false;
  if (values['backchannel-logout-uri'] !== undefined) body.backchannelLogoutUri = values['backchannel-logout-uri'];
  if (values['no-backchannel-logout-uri'] === true) body.backchannelLogoutUri = null;
  if (values['id-token-alg'] !== undefined) body.idTokenSignedResponseAlg = values['id-token-alg'];
  return body;
}

/** The API's body checks (admin-routes.ts), as a usage error naming the options. */
function checked<T>(
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } },
  body: unknown,
): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${issue.path.length === 0 ? 'options' : optionOf(issue.path.map(String).join('.'))}: ${issue.message}`);
  throw new UsageError(problems.join('; '), CLIENTS_USAGE);
}

/** A refused registration: its message with each problem at its option (the CLI prints the message alone). */
async function withIssuesAtOptions<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError && error.code === 'validation_error' && error.issues !== undefined && error.issues.length > 0) {
      const problems = error.issues.map((issue) => `${optionOf(issue.path)}: ${issue.message}`);
      throw validationError(error.issues, `${error.message} ${problems.join('; ')}`);
    }
    throw error;
  }
}

function printClient(client: OidcClient): void {
  const list = (values: readonly string[]): string => (values.length === 0 ? '-' : values.join(' '));
  print(`client_id: ${client.clientId}`);
  print(`name: ${client.name}`);
  print(`type: ${client.public ? 'public (no secret; PKCE)' : 'confidential'}${client.firstParty ? ', first party (no consent page)' : ''}`);
  print(`redirect_uris: ${list(client.redirectUris)}`);
  print(`post_logout_redirect_uris: ${list(client.postLogoutRedirectUris)}`);
  print(`grant_types: ${list(client.grantTypes)}`);
  print(`scopes: ${list(client.scopes)}`);
  print(`backchannel_logout_uri: ${client.backchannelLogoutUri ?? '-'}`);
  print(`id_token_signed_response_alg: ${client.idTokenSignedResponseAlg}`);
  print(`created: ${client.createdAt.toISOString()}  updated: ${client.updatedAt.toISOString()}`);
}

function printSecret(secret: string): void {
  print(`client_secret: ${secret}`);
  print('The client secret is shown once: only its hash is kept. Store it with the app now.');
}

async function createAction(deps: ClientAdminDeps, rest: readonly string[]): Promise<void> {
  const { values, positionals } = parse(rest, { ...CLIENT_OPTIONS, public: { type: 'boolean' } }, CLIENTS_USAGE);
  if (positionals.length > 0 || values.name === undefined) throw new UsageError('clients create needs --name (and no other words).', CLIENTS_USAGE);
  const body = checked(createClientBody, clientBodyOf(values));
  const { client, clientSecret } = await withIssuesAtOptions(() => registerClient(deps, operatorNow(), body));
  print(`Created ${client.public ? 'public' : 'confidential'} client "${client.name}".`);
  print(`client_id: ${client.clientId}`);
  if (clientSecret !== null) printSecret(clientSecret);
}

async function updateAction(deps: ClientAdminDeps, rest: readonly string[]): Promise<void> {
  const options: Options = { ...CLIENT_OPTIONS, 'no-first-party': { type: 'boolean' }, 'no-backchannel-logout-uri': { type: 'boolean' } };
  const { values, positionals } = parse(rest, options, CLIENTS_USAGE);
  const id = oneId(positionals, 'clients update', CLIENTS_USAGE, isClientId, 'a client id');
  if (values['first-party'] === true && values['no-first-party'] === true) throw new UsageError('--first-party or --no-first-party, not both.', CLIENTS_USAGE);
  if (values['backchannel-logout-uri'] !== undefined && values['no-backchannel-logout-uri'] === true) {
    throw new UsageError('--backchannel-logout-uri or --no-backchannel-logout-uri, not both.', CLIENTS_USAGE);
  }
  const body = checked(updateClientBody, clientBodyOf(values));
  const client = await withIssuesAtOptions(() => updateClient(deps, operatorNow(), id, body));
  print(`Updated client ${client.clientId}.`);
  printClient(client);
}

const CLIENT_ACTIONS = ['list', 'show', 'create', 'update', 'delete', 'rotate-secret'];

async function clientAction(deps: ClientAdminDeps, action: string, rest: readonly string[]): Promise<void> {
  if (action === 'create') return createAction(deps, rest);
  if (action === 'update') return updateAction(deps, rest);
  const { positionals } = parse(rest, {}, CLIENTS_USAGE);
  if (action === 'list') {
    if (positionals.length > 0) throw new UsageError('clients list takes no arguments.', CLIENTS_USAGE);
    const clients = await deps.clients.listClients();
    if (clients.length === 0) return print('No clients.');
    for (const client of clients)
      print(`${client.clientId}  ${client.public ? 'public' : 'confidential'}  ${client.name}  ${client.redirectUris.join(' ') || '-'}`);
    return;
  }
  const id = oneId(positionals, `clients ${action}`, CLIENTS_USAGE, isClientId, 'a client id');
  if (action === 'show') return printClient(await findClient(deps, id));
  if (action === 'delete') {
    await deleteClient(deps, operatorNow(), id);
    return print(`Deleted client ${id} with its grants and tokens.`);
  }
  if (action === 'rotate-secret') {
    const secret = await withIssuesAtOptions(() => rotateClientSecret(deps, operatorNow(), id));
    print(`New secret for client ${id}; the previous one no longer works.`);
    return printSecret(secret);
  }
  throw new UsageError(`Unknown clients command "${action}".`, CLIENTS_USAGE);
}

// --- keys ------------------------------------------------------------------------------------

type KeyStatus = 'signing' | 'pending' | 'retired';

function statusOf(key: OidcSigningKey, now: Date): KeyStatus {
  if (key.retiredAt !== null) return 'retired';
  return key.signsFrom.getTime() <= now.getTime() ? 'signing' : 'pending';
}

/**
 * The envelope the servers seal keys with: ENCRYPTION_KEY_BASE64, else outside production the key
 * kept in the data folder (as `gatehouse serve` uses it), else none, which is refused by name.
 */
function envelopeOf(given: Readonly<Config>): Envelope {
  const config = withPersistedDevEncryptionKey(
    given,
    createCliLogger({ level: given.logLevel, format: chooseLogFormat(given.logFormat, process.stdout.isTTY === true) }),
  );
  const keys = config.encryptionKeys.length > 0 ? config.encryptionKeys : config.generatedEncryptionKey !== null ? [config.generatedEncryptionKey] : [];
  if (keys.length === 0) throw new ConfigError(['ENCRYPTION_KEY_BASE64: required to make signing keys, whose private parts are sealed with it']);
  return createEnvelope(keys);
}

async function listKeys(store: OidcKeyStore, now: Date): Promise<void> {
  const keys = await store.listKeys();
  if (keys.length === 0) return print('No signing keys (the server makes them on its first start).');
  for (const key of keys) {
    const retired = key.retiredAt === null ? '' : ` ${key.retiredAt.toISOString()}`;
    print(`${key.kid}  ${key.alg}  created ${key.createdAt.toISOString()}  signs from ${key.signsFrom.toISOString()}  ${statusOf(key, now)}${retired}`);
  }
}

async function rotateKeys(config: Readonly<Config>, store: OidcKeyStore, stores: Stores, now: boolean): Promise<void> {
  const envelope = envelopeOf(config);
  const operator = operatorNow();
  const signsFrom = new Date(operator.now.getTime() + (now ? 0 : config.oidcProvider.keyRotationDelayMs));
  const keys = await makeKeyPairSet(envelope, operator.now, signsFrom);
  await store.insertKeys(keys);
  await auditOperator(stores, operator, 'oidc_keys_rotated', { kids: keys.map((key) => key.kid).join(','), signsFrom: signsFrom.toISOString() });
  for (const key of keys) print(`New ${key.alg} key ${key.kid}`);
  const when = signsFrom.getTime() <= operator.now.getTime() ? 'now' : `from ${signsFrom.toISOString()}`;
  print(`Published at once; they sign ${when}. Retire the old keys (gatehouse keys retire KID) once no token they signed is still in use.`);
}

async function retireKey(store: OidcKeyStore, stores: Stores, kid: string): Promise<void> {
  const operator = operatorNow();
  const alg = (await store.listKeys()).find((key) => key.kid === kid)?.alg;
  const outcome = await retireSigningKey(store, kid, operator.now);
  if (outcome === 'not_found') throw notFound(`There is no signing key ${kid} that is not retired.`);
  if (outcome === 'last_key') {
    const message = `Key ${kid} is the last ${alg ?? ''} key: retiring it would leave ${alg ?? 'its algorithm'} with no key to sign with. Run gatehouse keys rotate first.`;
    throw validationError([{ path: 'kid', message: `the last ${alg ?? ''} key` }], message);
  }
  await auditOperator(stores, operator, 'oidc_key_retired', { kid, alg: alg ?? null });
  print(`Retired key ${kid}: it is no longer published, and tokens it signed no longer verify.`);
}

async function keyAction(config: Readonly<Config>, action: string, rest: readonly string[]): Promise<void> {
  const { values, positionals } = parse(rest, action === 'rotate' ? { now: { type: 'boolean' } } : {}, KEYS_USAGE);
  if (action !== 'list' && action !== 'rotate' && action !== 'retire') throw new UsageError(`Unknown keys command "${action}".`, KEYS_USAGE);
  if (action !== 'retire' && positionals.length > 0) throw new UsageError(`keys ${action} takes no arguments.`, KEYS_USAGE);
  const kid = action === 'retire' ? oneId(positionals, 'keys retire', KEYS_USAGE, (id) => /^[A-Za-z0-9_-]{1,64}$/.test(id), 'a key id (kid)') : '';
  await withDatabase(config, async ({ kysely, stores }) => {
    const store = createOidcKeyStore(kysely);
    if (action === 'list') return listKeys(store, systemClock.now());
    if (action === 'rotate') return rotateKeys(config, store, stores, values.now === true);
    return retireKey(store, stores, kid);
  });
}

function isHelp(action: string | undefined): boolean {
  return action === '--help' || action === '-h' || action === 'help';
}

export const OIDC_COMMANDS: readonly CliCommand[] = [
  {
    name: 'clients',
    summary: 'clients <list|show|create|update|delete|rotate-secret> …  OpenID Connect clients (gatehouse clients --help)',
    usage: CLIENTS_USAGE,
    async run(config, args) {
      const [action, ...rest] = args;
      if (action === undefined) throw new UsageError('Name a clients command.', CLIENTS_USAGE);
      if (isHelp(action)) return void print(CLIENTS_USAGE);
      if (!CLIENT_ACTIONS.includes(action)) throw new UsageError(`Unknown clients command "${action}".`, CLIENTS_USAGE);
      await withDatabase(config, ({ kysely, stores }) =>
        clientAction({ clients: createOidcClientStore(kysely), stores, random: secureRandom, production: config.mode === 'production' }, action, rest),
      );
    },
  },
  {
    name: 'keys',
    summary: 'keys <list|rotate|retire> …  the OpenID Connect signing keys (gatehouse keys --help)',
    usage: KEYS_USAGE,
    async run(config, args) {
      const [action, ...rest] = args;
      if (action === undefined) throw new UsageError('Name a keys command.', KEYS_USAGE);
      if (isHelp(action)) return void print(KEYS_USAGE);
      await keyAction(config, action, rest);
    },
  },
];
