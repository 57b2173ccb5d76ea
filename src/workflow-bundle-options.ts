import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './dev/tool-paths';

/**
 * The workflow half of OpenTelemetry (`@temporalio/interceptors-opentelemetry`): its workflow interceptors
 * give each workflow run a span (a child of the span in the start's header), carry the trace into every
 * activity, child workflow and continue-as-new, and put trace and span ids on workflow log lines. They are
 * in every bundle, tracing on or off, so the workflow code (and so replay) is the same either way; with
 * tracing off the worker drops their spans (src/worker.ts `traceSinks`).
 */
export const workflowTraceInterceptorModule = require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

/**
 * What every bundle of errand's workflows is built with — the production build (scripts/bundle-workflows.ts),
 * a worker that bundles its sources at start (src/worker.ts), the tests and the bench: the same code in the
 * sandbox everywhere, with the trace interceptors. `preloadModules` runs src/workflows/sandbox-setup.ts once per sandbox, before the
 * SDK freezes the sandbox's globals.
 */
export function workflowBundleOptions(): { workflowsPath: string; preloadModules: string[]; workflowInterceptorModules: string[] } {
  const workflowInterceptorModules = [workflowTraceInterceptorModule];
  // From the project root rather than this file: the bundled CLI (dist/cli-bundle/) runs this code too.
  const sources = join(projectRoot, 'src', 'workflows');
  if (existsSync(join(sources, 'index.ts'))) return { workflowsPath: join(sources, 'index.ts'), preloadModules: [join(sources, 'sandbox-setup.ts')], workflowInterceptorModules };
  return { workflowsPath: require.resolve('./workflows'), preloadModules: [require.resolve('./workflows/sandbox-setup')], workflowInterceptorModules };
}
