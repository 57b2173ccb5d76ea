import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './dev/tool-paths';

/**
 * What every bundle of errand's workflows is built with — the production build (scripts/bundle-workflows.ts),
 * a worker that bundles its sources at start (src/worker.ts), the tests and the bench: the same code in the
 * sandbox everywhere. `preloadModules` runs src/workflows/sandbox-setup.ts once per sandbox, before the
 * SDK freezes the sandbox's globals.
 */
export function workflowBundleOptions(): { workflowsPath: string; preloadModules: string[] } {
  // From the project root rather than this file: the bundled CLI (dist/cli-bundle/) runs this code too.
  const sources = join(projectRoot, 'src', 'workflows');
  if (existsSync(join(sources, 'index.ts'))) return { workflowsPath: join(sources, 'index.ts'), preloadModules: [join(sources, 'sandbox-setup.ts')] };
  return { workflowsPath: require.resolve('./workflows'), preloadModules: [require.resolve('./workflows/sandbox-setup')] };
}
