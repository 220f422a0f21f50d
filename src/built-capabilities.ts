/**
 * @module What the gatehouse does with the built capabilities besides mounting their routes
 * (app.ts): start, drain and stop their work off the request path, gather their start banner
 * lines, run their sweeps. The gatehouse calls these without knowing which capability does what.
 */
import type { BackgroundTasks } from './background.js';
import type { BannerLine } from './banner.js';
import type { BuiltCapability, FastRoute, NodeRoute, SweepReport } from './capability.js';

/** The members of the Gatehouse that run the capabilities' work off the request path. */
export interface CapabilityWork {
  /**
   * Does the work that is due now (webhook deliveries, until none is), and waits; for tests. With
   * WEBHOOK_DELIVERY=worker (or no ENCRYPTION_KEY_BASE64) this process delivers nothing: all zero.
   */
  deliverWebhooks(): Promise<Readonly<Record<string, number>>>;
  /**
   * Starts it (webhook delivery, polling every second). `gatehouse serve` calls it; a host of the
   * library calls it in the processes that should deliver.
   */
  startWorkers(): void;
  /** The lines the capabilities add to the start banner from the database (webhook endpoints). */
  startLines(): Promise<BannerLine[]>;
  /**
   * For hosts on Node: the handler of a raw request target that a capability answers on Node's
   * request objects (the OpenID Connect provider under /oauth2/ and its discovery documents), or
   * null for everything `fetch` answers. `gatehouse serve` asks it for every request.
   */
  nodeRoute: NodeRoute;
  /**
   * For hosts on Node: a handler that may answer a request before anything else (the session
   * check's fast path), or null. `gatehouse serve` asks it first for every request.
   */
  fastRoute: FastRoute;
}

/** The Gatehouse's members over `built`: work still running off a response path finishes first. */
export function capabilityWork(built: BuiltCapabilities, background: Pick<BackgroundTasks, 'settle'>): CapabilityWork {
  return {
    deliverWebhooks: async () => {
      await background.settle();
      return built.drainWorkers();
    },
    startWorkers: built.startWorkers,
    startLines: built.startLines,
    nodeRoute: built.nodeRoute,
    fastRoute: built.fastRoute,
  };
}

export interface BuiltCapabilities {
  /** Starts every capability's worker (webhook delivery polls every second). */
  startWorkers(): void;
  /** Runs every worker until nothing is due, and waits; the counts of all, by name. */
  drainWorkers(): Promise<Readonly<Record<string, number>>>;
  /** Starts nothing new; waits for the work in flight. */
  stopWorkers(): Promise<void>;
  /** The lines the capabilities add to the start banner, in the list's order. */
  startLines(): Promise<BannerLine[]>;
  /** Each capability's sweep, in the list's order; their counts in one report. */
  sweep(now: Date): Promise<SweepReport>;
  /** The first capability's handler for a raw request target, or null. */
  nodeRoute: NodeRoute;
  /** The first capability's fast handler for a request, or null. */
  fastRoute: FastRoute;
}

export function builtCapabilities(built: readonly BuiltCapability[]): BuiltCapabilities {
  const workers = built.flatMap((capability) => (capability.worker === undefined ? [] : [capability.worker]));
  const nodeRoutes = built.flatMap((capability) => (capability.nodeRoute === undefined ? [] : [capability.nodeRoute]));
  const fastRoutes = built.flatMap((capability) => (capability.fastRoute === undefined ? [] : [capability.fastRoute]));
  return {
    startWorkers: () => {
      for (const worker of workers) worker.start();
    },
    drainWorkers: async () => Object.assign({}, ...(await Promise.all(workers.map((worker) => worker.drain())))) as Record<string, number>,
    stopWorkers: async () => {
      for (const worker of workers) await worker.stop();
    },
    startLines: async () => (await Promise.all(built.map(async (capability) => (await capability.startLines?.()) ?? []))).flat(),
    nodeRoute: (url) => {
      for (const route of nodeRoutes) {
        const handler = route(url);
        if (handler !== null) return handler;
      }
      return null;
    },
    fastRoute: (incoming) => {
      for (const route of fastRoutes) {
        const handler = route(incoming);
        if (handler !== null) return handler;
      }
      return null;
    },
    async sweep(now) {
      const report: Record<string, number> = {};
      for (const capability of built) if (capability.sweep !== undefined) Object.assign(report, await capability.sweep(now));
      return report;
    },
  };
}
