import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { expect, test } from 'vitest';
import { workflowBundleOptions } from '../../src/temporal/workflow-bundle-options';

/**
 * The modules shared by every workflow of a worker's sandbox (src/workflows/shared-modules.ts, decision
 * 0051): exactly the contracts and domain modules the workflow code loads (none left to be instantiated
 * per workflow, none added to the bundle only by the list), and none keeps state at its top level.
 */

const root = join(__dirname, '..', '..');
const sharedModulesFile = join(root, 'src', 'workflows', 'shared-modules.ts');
const listed = [...readFileSync(sharedModulesFile, 'utf8').matchAll(/^import '\.\.\/([^']+)';$/gm)].map((match) => match[1] ?? '').sort();
const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** Top-level memos of pure functions: state that gives the same answers whichever workflow filled it. */
const pureMemos = ['domain/child-words.ts: readAs'];

test('the list is the contracts and domain modules the workflow bundle holds without it', async () => {
  const options = workflowBundleOptions();
  expect(options.preloadModules.some((module) => module.endsWith(join('workflows', 'shared-modules.ts')))).toBe(true);
  const { code } = await bundleWorkflowCode({ ...options, preloadModules: options.preloadModules.filter((module) => !module.includes('shared-modules')), logger: quiet });
  const inBundle = [...new Set([...code.matchAll(/"\.\/src\/((?:contracts|domain)\/[^"]+)\.ts"/g)].map((match) => match[1] ?? ''))].sort();
  expect(inBundle.length).toBeGreaterThan(30);
  expect(listed).toEqual(inBundle);
}, 120_000);

test('no shared module keeps state at its top level (a variable, or a collection other than a declared memo)', () => {
  const problems: string[] = [];
  for (const module of listed) {
    const lines = readFileSync(join(root, 'src', `${module}.ts`), 'utf8').split('\n');
    lines.forEach((line, index) => {
      if (/^(export )?(let|var) /.test(line)) problems.push(`${module}.ts:${index + 1}: ${line}`);
      const collection = /^(?:export )?const (\w+)(?:: [^=]+)? = new (?:Map|Set|WeakMap|WeakSet)\b/.exec(line);
      if (collection && !pureMemos.includes(`${module}.ts: ${collection[1]}`)) problems.push(`${module}.ts:${index + 1}: ${line}`);
    });
  }
  expect(problems).toEqual([]);
});
