import type * as S3Sdk from '@aws-sdk/client-s3';

/**
 * The AWS S3 SDK, loaded on first use and then kept: it is over a MB of code, so the S3 stores (sources and
 * blobs) load it at their first call rather than when they are built (a process without S3 never does),
 * and a store asks for it on every call without a trip through the module loader each time.
 */
let sdk: Promise<typeof S3Sdk> | undefined;

/** The `@aws-sdk/client-s3` module. */
export function loadS3Sdk(): Promise<typeof S3Sdk> {
  // The package is CommonJS: Node's import() gives its exports by name, but in an esbuild chunk (the API's
  // Lambda bundle, infra/lib/api-bundle.ts) they are only the default export's properties.
  sdk ??= import('@aws-sdk/client-s3').then((loaded) => ('S3Client' in loaded ? loaded : (loaded as { default: typeof S3Sdk }).default));
  return sdk;
}
