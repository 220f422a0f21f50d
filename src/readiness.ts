/** @module What `GET /readyz` answers, and the detail operators get from `gatehouse.readiness()`. */
import type { DatabaseHandle } from './db/connect.js';
import type { LimiterBackend, LimiterStatus } from './limits/limiter-backend.js';
import type { Logger } from './logger.js';

/**
 * `ready`; `degraded` while the limits count in this instance's memory because their shared store
 * does not answer (the service works: it stays in rotation); `unavailable` while the database
 * does not answer.
 */
export interface Readiness {
  status: 'ready' | 'degraded' | 'unavailable';
  database: 'ok' | 'unreachable';
  limiter: LimiterStatus;
}

/** Asks the database and the limiter store at once (each bounded to 1.5 s) and logs each change of status. */
export function createReadinessCheck(database: DatabaseHandle, limiterBackend: LimiterBackend, logger: Logger): () => Promise<Readiness> {
  let lastStatus: Readiness['status'] = 'ready';
  return async () => {
    const [databaseState, limiter] = await Promise.all([
      database.ping().then(
        () => 'ok' as const,
        () => 'unreachable' as const,
      ),
      limiterBackend.checkStatus(),
    ]);
    // A limiter on its in-memory fallback still protects every endpoint, only per instance.
    const status = databaseState === 'unreachable' ? 'unavailable' : limiter === 'memory-fallback' ? 'degraded' : 'ready';
    const readiness: Readiness = { status, database: databaseState, limiter };
    if (status !== lastStatus) {
      // A warning both ways: whoever watches warnings sees the end of an incident too.
      logger.warn({ readiness, previous: lastStatus }, `readiness changed from ${lastStatus} to ${status}`);
      lastStatus = status;
    }
    return readiness;
  };
}
