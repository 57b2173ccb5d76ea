import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ToolContext } from '../../src/tools/tool';

/** A fresh working directory plus a sibling "outside" directory, both under one temp parent. */
export interface Sandbox {
  parent: string;
  workingDir: string;
  outside: string;
  context(signal?: AbortSignal): ToolContext;
  cleanup(): Promise<void>;
}

/** Creates a sandbox under the OS temp directory. */
export async function createSandbox(): Promise<Sandbox> {
  const parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'errand-tools-')));
  const workingDir = path.join(parent, 'work');
  const outside = path.join(parent, 'outside');
  await mkdir(workingDir);
  await mkdir(outside);
  return {
    parent,
    workingDir,
    outside,
    context: (signal) => ({ workingDir, abortSignal: signal ?? new AbortController().signal }),
    cleanup: () => rm(parent, { recursive: true, force: true }),
  };
}
