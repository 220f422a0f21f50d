/**
 * @module What a capability is: a value each feature folder exports from its `capability.ts`
 * (password sign-in, passkeys, two-factor sign-in, …), listed once in `src/capabilities.ts`.
 * `createGatehouse` builds the shared parts (`src/parts.ts`) and hands each capability the parts
 * it declares in its `build` parameter's type; the app mounts the routes it returns, the OpenAPI
 * document reads its route docs, the sweep adds its own, the CLI offers its commands. Adding a
 * capability touches its folder, its migration and one line of that list (docs/ARCHITECTURE.md,
 * "How to add a capability").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Hono } from 'hono';
import type { BannerLine } from './banner.js';
import type { AppEnv } from './http/env.js';
import type { RouteDocGroup } from './http/route-docs.js';
import type { SharedParts } from './parts.js';
import type { Config } from './config.js';

/** A sub-app and where it is mounted (`/api/auth`, `/api/admin`, `/`). */
export interface MountedRoutes {
  prefix: string;
  routes: Hono<AppEnv>;
}

/** What building a capability gives the app and the gatehouse. */
export interface BuiltCapability {
  /** Mounted in the order of the capability list, each capability's in its own order. */
  routes: readonly MountedRoutes[];
  /**
   * Deletes this capability's expired rows as of `now` (the hourly sweep); each count joins the
   * sweep's report under its name.
   */
  sweep?: (now: Date) => Promise<SweepReport>;
  /** Work off the request path (webhook delivery): `gatehouse serve` starts it, `close` stops it. */
  worker?: CapabilityWorker;
  /**
   * Lines this capability adds to the start banner from what it reads at start (the webhooks'
   * endpoint count): the configuration alone is the banner's own (banner.ts).
   */
  startLines?: () => Promise<readonly BannerLine[]>;
  /**
   * Requests this capability answers on Node's own request objects, before the app sees them (the
   * OpenID Connect engine under /oauth2/): the handler for a raw request target, or null.
   */
  nodeRoute?: NodeRoute;
  /**
   * Requests this capability may answer on Node's objects before anything else looks at them (the
   * session check: session/fast-path.ts), given the request; null to leave it to the others.
   */
  fastRoute?: FastRoute;
}

/** Picks the handler of a raw request target (`incoming.url`); it must be cheap, every request asks. */
export type NodeRoute = (url: string) => NodeHandler | null;
export type NodeHandler = (incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void>;

/** Picks the fast handler of a request (it must be cheap: every request asks), or null. */
export type FastRoute = (incoming: IncomingMessage) => FastHandler | null;
/**
 * Answers the request and resolves true, or resolves false having written nothing, and the app
 * answers it as usual. A handler that read the body first must read it with node-body.ts
 * `readNodeBodyAhead`, so that the app's read of it gets the same body. `closing` says whether
 * the server is shutting down (answer with Connection: close).
 */
export type FastHandler = (incoming: IncomingMessage, outgoing: ServerResponse, closing: () => boolean) => Promise<boolean>;

export interface CapabilityWorker {
  /** Polls for due work until stopped. */
  start(): void;
  /** Does what is due now and waits; each count by name (for tests and one-off runs). */
  drain(): Promise<Readonly<Record<string, number>>>;
  /** Starts nothing new; waits for the work in flight. */
  stop(): Promise<void>;
}

/** How many rows each part of one sweep deleted, by name (`sessions`, `auditEvents`, …). */
export type SweepReport = Readonly<Record<string, number>>;

/** A `gatehouse <name> …` command a capability brings (the operators' `users` and `audit`). */
export interface CliCommand {
  name: string;
  /** One line of `gatehouse --help`. */
  summary: string;
  /** The usage printed by `gatehouse <name> --help`, and with a usage error. */
  usage: string;
  /** `args` are the words after the command's name. */
  run(config: Readonly<Config>, args: readonly string[]): Promise<void>;
}

export interface Capability {
  name: string;
  /** Every route it may mount, with its prefix (documented even when not mounted, as the admin API). */
  routeDocs: readonly RouteDocGroup[];
  commands?: readonly CliCommand[];
  build(parts: SharedParts): BuiltCapability;
}

/**
 * A capability whose `build` declares, in its parameter's type, the shared parts it uses
 * (`Pick<SharedParts, 'stores' | 'limits' | …>`): a reader sees its dependencies in its signature.
 */
export function defineCapability<Needs extends keyof SharedParts>(capability: {
  name: string;
  routeDocs: readonly RouteDocGroup[];
  commands?: readonly CliCommand[];
  build(parts: Pick<SharedParts, Needs>): BuiltCapability;
}): Capability {
  return capability;
}
