import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { workflowSource } from '../../src/worker/workflow-source';

/**
 * Which workflow code a worker runs: a build's dist/workflow-bundle.js only while it is at least as new as the
 * sources beside it, so a checkout edited after `npm run build` does not run the old build's workflows next to
 * the new sources' activities.
 */

function checkout(): { root: string; bundle: string; source: string } {
  const root = mkdtempSync(join(tmpdir(), 'errand-workflow-source-'));
  mkdirSync(join(root, 'dist'));
  mkdirSync(join(root, 'src', 'workflows'), { recursive: true });
  const bundle = join(root, 'dist', 'workflow-bundle.js');
  const source = join(root, 'src', 'workflows', 'agent-loop.ts');
  writeFileSync(bundle, '// bundle');
  writeFileSync(source, '// source');
  return { root, bundle, source };
}

function setTime(file: string, seconds: number): void {
  utimesSync(file, seconds, seconds);
}

describe('workflowSource', () => {
  it('runs the prebuilt bundle when it is newer than every source file', () => {
    const { root, bundle, source } = checkout();
    setTime(source, 1_000);
    setTime(bundle, 2_000);
    expect(workflowSource({}, root)).toEqual({ workflowBundle: { codePath: bundle } });
  });

  it('bundles the sources when one of them changed after the build', () => {
    const { root, bundle, source } = checkout();
    setTime(bundle, 2_000);
    setTime(source, 3_000);
    const chosen = workflowSource({}, root);
    expect(chosen.workflowBundle).toBeUndefined();
    expect(chosen.workflowsPath).toMatch(/workflows/);
  });

  it('runs the bundle of an installed copy without sources, and the one ERRAND_WORKFLOW_BUNDLE names', () => {
    const root = mkdtempSync(join(tmpdir(), 'errand-workflow-installed-'));
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'dist', 'workflow-bundle.js'), '// bundle');
    expect(workflowSource({}, root)).toEqual({ workflowBundle: { codePath: join(root, 'dist', 'workflow-bundle.js') } });
    const { root: edited, source } = checkout();
    setTime(source, 5_000);
    const named = join(edited, 'dist', 'workflow-bundle.js');
    expect(workflowSource({ ERRAND_WORKFLOW_BUNDLE: named }, edited)).toEqual({ workflowBundle: { codePath: named } });
    expect(() => workflowSource({ ERRAND_WORKFLOW_BUNDLE: join(edited, 'missing.js') }, edited)).toThrow(/ERRAND_WORKFLOW_BUNDLE=.*missing\.js does not exist/);
  });
});
