import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildSync, type BuildOptions } from 'esbuild';

/**
 * The API's Lambda bundle, built one way for everyone: the CDK app ships it, the Lambda runtime test runs it
 * under AWS's Runtime Interface Emulator, and the bench measures its size and cold start. What the figure
 * measures is what is deployed.
 *
 * esbuild, one CommonJS file for Node 22 (Lambda's `nodejs22.x`), minified (a cold start reads and compiles
 * every byte; names are kept so stacks and errors still name functions), with a source map beside it that
 * `NODE_OPTIONS=--enable-source-maps` reads only when an error's stack is printed.
 */

const repositoryRoot = resolve(__dirname, '..', '..');

/** The entry point of the deployed API (it reads the secrets, then hands events to src/api/lambda.ts). */
export const apiBundleEntry = join(repositoryRoot, 'infra', 'lambda', 'api-handler.ts');

/** The handler setting of the function: `index.js`'s `handler`. */
export const apiBundleHandler = 'index.handler';

/** The OpenTelemetry packages src/observability/tracing-sdk.ts imports: not in the API bundle. */
export const traceSdkPackages = ['@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/resources', '@opentelemetry/sdk-trace-base', '@opentelemetry/sdk-trace-node'] as const;

/** esbuild's options for the API bundle (without the output folder). */
export const apiBundleOptions: BuildOptions = {
  entryPoints: [apiBundleEntry],
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'cjs',
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
  /** The folder holding `index.js` and `index.js.map`. */
  directory: string;
  /** Bytes of `index.js` (the code a cold start loads). */
  codeBytes: number;
  /** Bytes of every file in the folder (the deployment package, source map included). */
  packageBytes: number;
}

/** Builds the API bundle into `directory` (emptied first). Synchronous, so the CDK app can call it while it constructs the stack. */
export function buildApiBundle(directory: string): ApiBundle {
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  buildSync({ ...apiBundleOptions, outfile: join(directory, 'index.js') });
  const packageBytes = readdirSync(directory).reduce((sum, file) => sum + statSync(join(directory, file)).size, 0);
  return { directory, codeBytes: statSync(join(directory, 'index.js')).size, packageBytes };
}
