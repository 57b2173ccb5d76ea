import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../dev/tool-paths';

/**
 * errand's workflow trace interceptors (src/workflows/trace-interceptors.ts, decision 0033): each workflow
 * run a span (a child of the span in the start's header), the trace carried into every activity, child
 * workflow and continue-as-new, trace and span ids on workflow log lines — what Temporal's OpenTelemetry
 * interceptors do, without the OpenTelemetry SDK in the sandbox. They are in every bundle, tracing on or
 * off, so the workflow code (and so replay) is the same either way; with tracing off the worker drops their
 * spans (src/worker/errand-worker.ts `traceWorkerOptions`).
 */
export const workflowTraceInterceptorModule = existsSync(join(projectRoot, 'src', 'workflows', 'trace-interceptors.ts'))
  ? join(projectRoot, 'src', 'workflows', 'trace-interceptors.ts')
  : require.resolve('../workflows/trace-interceptors');

/**
 * What every bundle of errand's workflows is built with — the production build (scripts/bundle-workflows.ts),
 * a worker that bundles its sources at start (src/worker/workflow-source.ts), the tests and the bench: the same code in the
 * sandbox everywhere, with the trace interceptors. `preloadModules` runs src/workflows/sandbox-setup.ts once per sandbox, before the
 * SDK freezes the sandbox's globals, and loads the pure modules of src/workflows/shared-modules.ts once for every workflow (decision 0051).
 */
export function workflowBundleOptions(): { workflowsPath: string; preloadModules: string[]; workflowInterceptorModules: string[] } {
  const workflowInterceptorModules = [workflowTraceInterceptorModule];
  // From the project root rather than this file: the bundled CLI (dist/cli-bundle/) runs this code too.
  const sources = join(projectRoot, 'src', 'workflows');
  if (existsSync(join(sources, 'index.ts'))) return { workflowsPath: join(sources, 'index.ts'), preloadModules: [join(sources, 'sandbox-setup.ts'), join(sources, 'shared-modules.ts')], workflowInterceptorModules };
  return { workflowsPath: require.resolve('../workflows'), preloadModules: [require.resolve('../workflows/sandbox-setup'), require.resolve('../workflows/shared-modules')], workflowInterceptorModules };
}
