import { existsSync } from 'node:fs';
import type { ErrandConfig } from '../settings/config';
import { createSharedSources, type SharedSources } from '../sources/shared-sources';

/**
 * The sources the API uses (decision 0023): the worker's stores in the worker's order, resolved in the
 * tenant's working directory, so `POST /v1/delegations` and `GET /v1/sources` find what a session's
 * `delegate` finds. Project folders are read where the working root is on the API's disk (the API beside
 * its workers, `errand dev`); where it is not (a Lambda), only the operator's and user-level stores are
 * searched, and a tenant's own project recipes are delegated from a session.
 *
 * Loaded with `import()` by default-dependencies.ts (with the planner, api-planning-parts.ts): sources bring
 * the YAML parser, JSON Schema validation and the tool registry, which only the routes that read sources
 * or plan a delegation need (decision 0026).
 */
export function createApiSourceLookup(config: ErrandConfig, homeDirectory?: string): SharedSources {
  // Looked at per lookup, not once: `errand dev` may create the working root after the API starts.
  return createSharedSources(config, homeDirectory, () => existsSync(config.workingDir));
}
