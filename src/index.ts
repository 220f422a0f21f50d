/** @module Gatehouse as a library: build a config, create the handler, mount it anywhere. */
export { createGatehouse, type Gatehouse, type GatehouseOptions, type GatehouseSession } from './gatehouse.js';
export { loadConfig, ConfigError, type Config } from './config.js';
export { withDevelopmentSecrets } from './dev-secret.js';
export { MockClock, systemClock, type Clock } from './clock.js';
export { startServer, type RunningServer } from './server.js';
export type { PublicUser } from './users/user.js';
