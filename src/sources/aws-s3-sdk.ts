import { commonJsExports } from './common-js-exports';
import type * as S3Sdk from '@aws-sdk/client-s3';

/**
 * The AWS S3 SDK, loaded on first use and then kept: it is over a MB of code, so the S3 stores (sources and
 * blobs) load it at their first call rather than when they are built (a process without S3 never does),
 * and a store asks for it on every call without a trip through the module loader each time.
 */
let sdk: Promise<typeof S3Sdk> | undefined;

/** The `@aws-sdk/client-s3` module. */
export function loadS3Sdk(): Promise<typeof S3Sdk> {
  // The package is CommonJS: in an esbuild chunk its exports arrive only as `default` (commonJsExports).
  sdk ??= import('@aws-sdk/client-s3').then((loaded) => commonJsExports(loaded, 'S3Client', '@aws-sdk/client-s3'));
  return sdk;
}
