import { mkdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build, type Plugin } from 'esbuild';

/**
 * Builds the bundled CLI that `bin/errand.js` runs when it is fresh (see {@link cliBundleEntry}): src/cli.ts
 * and everything it imports, dependencies included, as ES modules split at every dynamic import, so each
 * command loads only its own code — `errand --help` a few KB, `errand peek` the API client but no worker,
 * web server or model SDK. Run by `npm ci` (the `prepare` script) and `npm run build`.
 *
 * Why a bundle: run from TypeScript through tsx, every start transpiles and resolves hundreds of files
 * (about a second for `--help`); one pre-built file per command loads in tens of ms.
 *
 * Usage: `tsx scripts/build-cli.ts [--outdir dist/cli-bundle]`
 */

/** Packages left to Node's own loading: native code and the Temporal worker's bundler (webpack, swc). */
// QuickJS's WebAssembly file is found beside its own module, so the engine stays in node_modules.
const external = ['@temporalio/worker', '@temporalio/core-bridge', '@swc/core', 'webpack', '@jitl/quickjs-wasmfile-release-sync'];

/**
 * Prepended to every output file. The sources are CommonJS and use `require` (some dependencies load
 * optional parts with it) and `__dirname` (the project root is found from it); ES modules have neither.
 * The names are unusual so they cannot clash with bundled code.
 */
const banner = [
  "import { createRequire as __errandCreateRequire } from 'node:module';",
  "import { dirname as __errandDirname } from 'node:path';",
  "import { fileURLToPath as __errandFileURLToPath } from 'node:url';",
  'const require = __errandCreateRequire(import.meta.url);',
  'const __filename = __errandFileURLToPath(import.meta.url);',
  'const __dirname = __errandDirname(__filename);',
].join(' ');

/**
 * zod's `z` namespace re-exports every one of its ~50 error-message locales (about 300 KB of the CLI's
 * shared chunk, parsed by every command that validates anything); errand speaks English only and never
 * switches locale, so the bundle keeps `z.locales.en` and drops the rest. Measured: `errand peek` loads
 * about a third faster (bench figure cli-peek).
 */
const englishOnlyZodLocales: Plugin = {
  name: 'zod-english-locale-only',
  setup(builder) {
    builder.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]zod[\\/]v4[\\/](?:classic|mini|core)[\\/]/.test(args.importer)) return undefined;
      return { path: join(args.resolveDir, '..', 'locales', 'en.js'), namespace: 'zod-english-locale' };
    });
    builder.onLoad({ filter: /.*/, namespace: 'zod-english-locale' }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};

/** The entry file the launcher imports, relative to the output folder. */
export const cliBundleEntry = 'errand.mjs';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { outdir: { type: 'string' } }, strict: true });
  const root = resolve(__dirname, '..');
  const outdir = resolve(values.outdir ?? join(root, 'dist', 'cli-bundle'));
  // The bundle's time stamp is the time the build began: a source saved while it runs is newer, so the
  // launcher treats the bundle as stale rather than running code that may predate the change.
  const began = new Date();
  const started = Date.now();
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    // The threads' programs (src/sources/template-thread.ts and src/workflow-scripts/round-thread.ts find them beside the bundle's entry).
    entryPoints: {
      errand: join(root, 'src', 'cli.ts'),
      'template-thread': join(root, 'src', 'sources', 'template-thread-entry.ts'),
      'workflow-round-thread': join(root, 'src', 'workflow-scripts', 'round-thread-entry.ts'),
    },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    external,
    plugins: [englishOnlyZodLocales],
    banner: { js: banner },
    // src/worker.ts and src/api/server.ts run themselves when they are the main module
    // (`require.main === module`); inside the bundle they never are (null is not undefined, so the check
    // folds to false at build time), and ES modules have no `module`.
    define: { 'require.main': 'null', module: 'undefined' },
    // Readable stack traces in bug reports matter more than a few KB.
    minifyWhitespace: true,
    sourcemap: false,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  writeFileSync(join(outdir, 'meta.json'), JSON.stringify(result.metafile));
  const entry = join(outdir, cliBundleEntry);
  utimesSync(entry, began, began);
  const chunks = Object.keys(result.metafile.outputs).filter((file) => file.endsWith('.mjs'));
  const size = chunks.reduce((sum, file) => sum + statSync(resolve(root, file)).size, 0);
  process.stdout.write(`build-cli: wrote ${relative(root, entry)} and ${chunks.length - 1} chunks (${Math.round(size / 1024)} KiB) in ${Date.now() - started} ms\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`build-cli: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
