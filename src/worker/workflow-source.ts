import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkerOptions } from '@temporalio/worker';
import { projectRoot } from '../dev/tool-paths';
import { workflowBundleOptions } from '../temporal/workflow-bundle-options';

/**
 * Where the workflow code comes from: `ERRAND_WORKFLOW_BUNDLE` when set; else the prebuilt bundle
 * (production: `npm run build` writes dist/workflow-bundle.js) when it is at least as new as every source file
 * (a checkout whose sources changed after a build must not run the workflows of the old build beside the
 * activities of the new sources); else the sources, bundled at start.
 */
export function workflowSource(env: NodeJS.ProcessEnv = process.env, root: string = projectRoot): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions'> {
  if (env.ERRAND_WORKFLOW_BUNDLE) {
    if (existsSync(env.ERRAND_WORKFLOW_BUNDLE)) return { workflowBundle: { codePath: env.ERRAND_WORKFLOW_BUNDLE } };
    throw new Error(`ERRAND_WORKFLOW_BUNDLE=${env.ERRAND_WORKFLOW_BUNDLE} does not exist; run "npm run build" or unset it`);
  }
  const prebuilt = join(root, 'dist', 'workflow-bundle.js');
  const sources = join(root, 'src');
  if (existsSync(prebuilt) && (!existsSync(sources) || newestModification(sources) <= statSync(prebuilt).mtimeMs)) return { workflowBundle: { codePath: prebuilt } };
  return workflowsFromSources();
}

/** The newest modification time of the files under a folder (a few milliseconds for errand's sources). */
function newestModification(folder: string): number {
  let newest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestModification(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** The workflow sources, bundled by the worker at start with errand's bundle options (the sandbox setup). */
export function workflowsFromSources(): Pick<WorkerOptions, 'workflowsPath' | 'bundlerOptions'> {
  const { workflowsPath, preloadModules } = workflowBundleOptions();
  return { workflowsPath, bundlerOptions: { preloadModules } };
}
