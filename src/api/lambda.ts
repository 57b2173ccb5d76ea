import type { Hono } from 'hono';
import { handle, type APIGatewayProxyResult, type LambdaContext, type LambdaEvent } from 'hono/aws-lambda';
import { configureLogging, createLogger, providerApiKeys } from '../observability/json-logger';
import { startTracing, type Tracing } from '../observability/tracing';
import type { ApiEnv } from './api-env';
import { createApp } from './app';
import { createApiDependencies } from './default-dependencies';
import { noProviderWarning } from './problem';

/**
 * The API as an AWS Lambda handler behind an API Gateway HTTP API (payload format 2.0). The app and its
 * Temporal connection are built on the first invocation and reused by the warm container; a
 * configuration error fails that invocation with the message in the function's log.
 */

/** An API Gateway HTTP API event, payload format 2.0 (the one event kind with `rawPath`). */
export type ApiGatewayV2Event = Extract<LambdaEvent, { rawPath: string }>;

/** A Lambda handler for API Gateway v2 events. */
export type ApiGatewayV2Handler = (event: ApiGatewayV2Event, context?: LambdaContext) => Promise<APIGatewayProxyResult>;

/** Wraps an app as a Lambda handler. */
export function createLambdaHandler(app: Hono<ApiEnv>): ApiGatewayV2Handler {
  const lambdaHandler = handle(app);
  return (event, context) => lambdaHandler(event, context);
}

let cached: ApiGatewayV2Handler | undefined;
let tracing: Tracing | undefined;

/** The Lambda entry point (`handler` in the function configuration). */
export const handler: ApiGatewayV2Handler = async (event, context) => {
  if (!cached) {
    const deps = createApiDependencies({ startedBy: 'errand HTTP API (Lambda)' });
    // A Lambda behind API Gateway is reachable from the internet: never without keys.
    if (deps.api.auth.mode === 'off') throw new Error('ERRAND_API_AUTH=off is refused in the Lambda: it serves the internet; configure ERRAND_API_KEYS');
    configureLogging({ secrets: providerApiKeys(deps.config.providers) });
    if (deps.config.providers.length === 0) createLogger('api').warn(noProviderWarning);
    // With OTEL_EXPORTER_OTLP_ENDPOINT set; the SDK is not in the bundle (docs/observability.md: from a layer).
    tracing = await startTracing('api');
    cached = createLambdaHandler(createApp(deps));
  }
  try {
    return await cached(event, context);
  } finally {
    // The container may be frozen once the function answered: its spans leave before that.
    await tracing?.flush();
  }
};
