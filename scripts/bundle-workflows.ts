import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowBundleOptions } from '../src/temporal/workflow-bundle-options';

/**
 * Prebuilds the workflow bundle (`npm run build` runs this after `tsc`). A production worker loads this file
 * instead of bundling src/workflows at start (src/worker/workflow-source.ts `workflowSource()`): start-up takes a second
 * instead of webpack's many, the image needs no dev dependencies, and every worker of a release runs
 * byte-identical workflow code — the code the replay test (test/deploy/replay.test.ts) checks.
 *
 * Usage: `tsx scripts/bundle-workflows.ts [--out dist/workflow-bundle.js]`
 */

const root = resolve(__dirname, '..');

/**
 * Bundles src/workflows and writes the bundle to `out`; returns its size in bytes. The test run's global
 * setup uses this too, so the tests run the very bundle a build makes.
 */
export async function bundleWorkflows(out: string): Promise<number> {
  const { code } = await bundleWorkflowCode({
    ...workflowBundleOptions(),
    // webpack's progress chatter is noise in a build log; warnings and errors still show.
    logger: {
      log: () => undefined,
      trace: () => undefined,
      debug: () => undefined,
      info: () => undefined,
      warn: (message: string) => process.stderr.write(`bundle-workflows: ${message}\n`),
      error: (message: string) => process.stderr.write(`bundle-workflows: ${message}\n`),
    },
  });
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, code);
  return code.length;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: 'string' } }, strict: true });
  const out = resolve(values.out ?? resolve(root, 'dist', 'workflow-bundle.js'));
  const started = Date.now();
  const size = await bundleWorkflows(out);
  process.stdout.write(`bundle-workflows: wrote ${out} (${Math.round(size / 1024)} KiB) in ${Date.now() - started} ms\n`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`bundle-workflows: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
