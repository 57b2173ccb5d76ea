import { TemporalAuth, type ErrandSettings } from './settings';

/**
 * The environment the CDK app gives the API's Lambda function, in one function so that the Lambda runtime
 * test runs the bundle with exactly what a deployment sets (with its own Temporal, bucket and secrets).
 */

/**
 * What the workers and the API share: the Temporal connection (secrets apart), the task queue, the model
 * providers and the recipe stores (`ERRAND_STORES`, JSON).
 */
export function sharedEnvironment(settings: ErrandSettings, recipeStores: string): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: settings.temporalAddress,
    TEMPORAL_NAMESPACE: settings.temporalNamespace,
    ...(settings.temporalAuth === TemporalAuth.none ? {} : { TEMPORAL_TLS: 'true' }),
    ...(settings.temporalHttpUrl === undefined ? {} : { ERRAND_TEMPORAL_HTTP_URL: settings.temporalHttpUrl }),
    ERRAND_TASK_QUEUE: settings.taskQueue,
    ERRAND_PROVIDERS: settings.providers,
    ERRAND_STORES: recipeStores,
  };
}

/** What the function's environment is made of. */
export interface ApiFunctionEnvironmentInput {
  /** Temporal connection, task queue, providers and recipe stores: the same for the API and the workers. */
  temporal: Record<string, string>;
  /**
   * `ERRAND_SECRET_ENV`: the secrets read at cold start through the Parameters and Secrets extension
   * (infra/lambda/api-handler.ts). Undefined where no extension runs (the emulator): each variable it would
   * name is then set in the environment itself, the documented fallback.
   */
  secretEnv?: string;
  /** The workers' working root (the API only joins tenant names onto it). */
  workingRoot: string;
  /** The payload bucket and the workers' prefix in it. */
  payloadBucket: string;
  payloadPrefix: string;
}

/** The function's environment variables. */
export function apiFunctionEnvironment(input: ApiFunctionEnvironmentInput): Record<string, string> {
  return {
    ...input.temporal,
    ...(input.secretEnv === undefined ? {} : { ERRAND_SECRET_ENV: input.secretEnv }),
    ERRAND_API_MAX_WAIT_MS: '25000',
    // The function's file system is read-only apart from /tmp.
    ERRAND_DATA_DIR: '/tmp/errand',
    // The workers' path: the API only joins tenant names onto it, it never looks at it.
    ERRAND_WORKING_DIR: input.workingRoot,
    ERRAND_BLOB_BUCKET: input.payloadBucket,
    // The workers' store: the API writes only under its inbound/ keys (the role allows nothing else).
    ERRAND_BLOB_PREFIX: input.payloadPrefix,
    NODE_OPTIONS: '--enable-source-maps',
  };
}
