import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowBundleOptions } from '../src/temporal/workflow-bundle-options';

/**
 * A workflow bundle of the current code in which `patched(id)` answers false for the given patch ids: runs
 * take the branch that code from before each patch took and write no marker, as that code did. The
 * recording script (record-histories.ts) records "before the patch" histories with it, which the current
 * code must replay. Only `@temporalio/workflow` as imported by errand's workflow code is swapped; the SDK's
 * own modules import it by relative paths and stay as they are.
 */
export async function bundleWithPatchesWithheld(patchIds: readonly string[]): Promise<string> {
  const real = require.resolve('@temporalio/workflow');
  const folder = mkdtempSync(join(tmpdir(), 'errand-withheld-patches-'));
  const shim = join(folder, 'workflow-with-withheld-patches.js');
  writeFileSync(shim, [
    `export * from ${JSON.stringify(real)};`,
    `import { patched as realPatched } from ${JSON.stringify(real)};`,
    `const withheld = ${JSON.stringify(patchIds)};`,
    'export function patched(patchId) { return withheld.includes(patchId) ? false : realPatched(patchId); }',
    '',
  ].join('\n'));
  try {
    const { code } = await bundleWorkflowCode({
      ...workflowBundleOptions(),
      webpackConfigHook: (config) => ({ ...config, resolve: { ...config.resolve, alias: { ...(config.resolve?.alias as Record<string, string | false>), '@temporalio/workflow$': shim } } }),
      logger: { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: (message: string) => process.stderr.write(`withheld-patches: ${message}\n`) },
    });
    return code;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
