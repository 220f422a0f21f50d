/**
 * @module The brand as a capability: it serves the brand's files under /assets/brand/ (logo,
 * stylesheets); the pages link to them through `brandHead` and `brandMark` (brand/brand.ts).
 */
import { defineCapability } from '../capability.js';
import type { SharedParts } from '../parts.js';
import { brandAssets } from './brand.js';
import { brandRouteDocs, createBrandRoutes } from './routes.js';

export const brand = defineCapability({
  name: 'brand',
  routeDocs: [{ prefix: '', docs: brandRouteDocs }],
  build: (parts: Pick<SharedParts, 'config'>) => ({
    routes: [{ prefix: '/', routes: createBrandRoutes(brandAssets(parts.config.brand)) }],
  }),
});
