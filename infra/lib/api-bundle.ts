import { copyFileSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { buildSync, type BuildOptions } from 'esbuild';

/**
 * The API's Lambda bundle, built one way for everyone: the CDK app ships it, the Lambda runtime test runs it
 * under AWS's Runtime Interface Emulator, and the bench measures its size and cold start. What the figure
 * measures is what is deployed.
 *
 * esbuild, ES modules for Node 22 (Lambda's `nodejs22.x`) split into chunks, minified (a cold start reads and
 * compiles every byte it loads; names are kept so stacks and errors still name functions), with source maps
 * beside them that `NODE_OPTIONS=--enable-source-maps` reads only when an error's stack is printed.
 *
 * Why chunks (decision 0026): what only some routes need (the AWS SDK for the S3 stores, the MCP server, the
 * YAML parser, JSON Schema validation, the Temporal SDK when no HTTP API is configured) is reached through
 * `import()`, and esbuild puts each such part in a chunk of its own that Node reads only when a request gets
 * there. One CommonJS file would carry those bytes in the file every cold start reads.
 */

const repositoryRoot = resolve(__dirname, '..', '..');

/** The entry point of the deployed API (it reads the secrets, then hands events to src/api/lambda.ts). */
export const apiBundleEntry = join(repositoryRoot, 'infra', 'lambda', 'api-handler.ts');

/** The handler setting of the function: `index.mjs`'s `handler`. */
export const apiBundleHandler = 'index.handler';

/** The entry file of the bundle (an ES module: Lambda's Node runtime loads `.mjs` as one). */
export const apiBundleEntryFile = 'index.mjs';

/**
 * Bundled CommonJS packages call `require` for Node's built-ins; an ES module has none, so every output file
 * gets one from `createRequire` (esbuild's shim throws "Dynamic require ... is not supported" otherwise).
 */
const requireBanner = [
  "import { createRequire as __errandCreateRequire } from 'node:module';",
  "import { dirname as __errandDirname } from 'node:path';",
  "import { fileURLToPath as __errandFileURLToPath } from 'node:url';",
  'const require = __errandCreateRequire(import.meta.url);',
  // src/sources/template-thread.ts finds the rendering thread's program beside the file it runs from.
  'const __dirname = __errandDirname(__errandFileURLToPath(import.meta.url));',
].join(' ');

/** The rendering thread's program: an entry of its own, `template-thread.mjs` beside `index.mjs`. */
export const templateThreadEntry = join(repositoryRoot, 'src', 'sources', 'template-thread-entry.ts');

/** The OpenTelemetry packages src/observability/tracing-sdk.ts imports: not in the API bundle. */
export const traceSdkPackages = ['@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/resources', '@opentelemetry/sdk-trace-base', '@opentelemetry/sdk-trace-node'] as const;

/** esbuild's options for the API bundle (without the output folder). */
export const apiBundleOptions: BuildOptions = {
  entryPoints: { index: apiBundleEntry, 'template-thread': templateThreadEntry },
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'esm',
  splitting: true,
  outExtension: { '.js': '.mjs' },
  entryNames: '[name]',
  chunkNames: 'chunks/[name]-[hash]',
  banner: { js: requireBanner },
  minify: true,
  keepNames: true,
  sourcemap: true,
  // Nothing else is external: the AWS SDK is bundled too, pinned at the version the code was tested with,
  // not whatever the runtime ships. The OpenTelemetry SDK and exporter are left out: the API loads them
  // only when OTEL_EXPORTER_OTLP_ENDPOINT is set (src/observability/tracing.ts), and a function that
  // exports traces gets them from a layer (docs/observability.md). @opentelemetry/api stays in.
  external: [...traceSdkPackages],
  legalComments: 'none',
  logLevel: 'error',
};

/** What a build wrote. */
export interface ApiBundle {
  /** The folder holding `index.mjs`, its chunks (`chunks/`) and their source maps. */
  directory: string;
  /**
   * Bytes of the code a cold start loads: `index.mjs` and every chunk it imports statically (transitively).
   * Chunks reached only through `import()` are read when a request needs them.
   */
  codeBytes: number;
  /** Bytes of every JavaScript file of the bundle, the chunks loaded on demand included. */
  allCodeBytes: number;
  /** Bytes of every file in the folder (the deployment package, source maps included). */
  packageBytes: number;
  /** The output files a cold start loads (relative to `directory`), entry first. */
  coldStartFiles: string[];
}

function filesUnder(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' }).filter((file) => statSync(join(directory, file)).isFile());
}

/** Builds the API bundle into `directory` (emptied first). Synchronous, so the CDK app can call it while it constructs the stack. */
export function buildApiBundle(directory: string): ApiBundle {
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  const { metafile } = buildSync({ ...apiBundleOptions, outdir: directory, metafile: true });
  // The workflow-script sandbox's engine (QuickJS in WebAssembly, loaded by POST /v1/workflows's projection) reads its .wasm beside its chunk.
  copyFileSync(join(dirname(require.resolve('@jitl/quickjs-wasmfile-release-sync/package.json')), 'dist', 'emscripten-module.wasm'), join(directory, 'chunks', 'emscripten-module.wasm'));
  // The metafile names outputs relative to the working directory; walk the static imports from the entry.
  const outputs = new Map(Object.entries(metafile.outputs).map(([file, output]) => [resolve(file), output]));
  const entry = join(directory, apiBundleEntryFile);
  const coldStart: string[] = [];
  const pending = [entry];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (coldStart.includes(file)) continue;
    coldStart.push(file);
    for (const imported of outputs.get(file)?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) pending.push(resolve(imported.path));
    }
  }
  const files = filesUnder(directory);
  const bytes = (file: string) => statSync(join(directory, file)).size;
  return {
    directory,
    codeBytes: coldStart.reduce((sum, file) => sum + statSync(file).size, 0),
    allCodeBytes: files.filter((file) => file.endsWith('.mjs')).reduce((sum, file) => sum + bytes(file), 0),
    packageBytes: files.reduce((sum, file) => sum + bytes(file), 0),
    coldStartFiles: coldStart.map((file) => relative(directory, file)),
  };
}
