import { z } from 'zod';
import { handler as apiHandler, type ApiGatewayV2Handler } from '../../src/api/lambda';

/**
 * The Lambda entry point of the deployed API: it puts the secrets the API needs (the Temporal API key or
 * mTLS pair, the API key hashes) into `process.env`, then hands the event to the API's own handler
 * (src/api/lambda.ts), which reads its configuration from the environment on its first invocation.
 *
 * Why not plain environment variables: a Lambda has no native "secret from Secrets Manager" variable, and
 * resolving a secret into the function configuration at deploy time would show it to anyone who may read
 * that configuration. Instead the secrets are read at cold start through the AWS Parameters and Secrets
 * Lambda Extension (a layer serving `localhost:2773`), which needs no AWS SDK in the bundle. The function's
 * role may read exactly the secrets named here.
 *
 * `ERRAND_SECRET_ENV` maps variable names to secrets: `{"TEMPORAL_API_KEY": {"secretId": "<arn>",
 * "jsonKey": "apiKey"}, "ERRAND_API_KEYS": {"secretId": "<arn>"}}` (`jsonKey` picks one field of a JSON
 * secret; without it the whole secret string is the value).
 */

const secretEnvSchema = z.record(
  z.string().regex(/^[A-Z_][A-Z0-9_]*$/, { error: 'variable names are upper-case environment variable names' }),
  z.strictObject({ secretId: z.string().min(1), jsonKey: z.string().min(1).optional() }),
);

const extensionAnswerSchema = z.looseObject({ SecretString: z.string() });

async function fetchSecretString(secretId: string, variable: string): Promise<string> {
  const port = process.env.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT ?? '2773';
  const token = process.env.AWS_SESSION_TOKEN;
  if (!token) throw new Error(`cannot read the secret for ${variable}: AWS_SESSION_TOKEN is not set (not running in Lambda?)`);
  const response = await fetch(`http://localhost:${port}/secretsmanager/get?secretId=${encodeURIComponent(secretId)}`, {
    headers: { 'X-Aws-Parameters-Secrets-Token': token },
    signal: AbortSignal.timeout(5_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`cannot read secret ${secretId} for ${variable}: the secrets extension answered ${response.status} ${text.slice(0, 200)}`);
  const parsed = extensionAnswerSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`secret ${secretId} for ${variable} has no SecretString (binary secrets are not supported)`);
  return parsed.data.SecretString;
}

function pickJsonKey(secretString: string, jsonKey: string, secretId: string, variable: string): string {
  let json: unknown;
  try {
    json = JSON.parse(secretString);
  } catch {
    throw new Error(`secret ${secretId} for ${variable} must be a JSON object with the field "${jsonKey}"`);
  }
  const value = z.record(z.string(), z.unknown()).safeParse(json).data?.[jsonKey];
  if (typeof value !== 'string' || value.trim() === '') throw new Error(`secret ${secretId} for ${variable} has no non-empty string field "${jsonKey}"`);
  return value;
}

/** Reads every secret named by `ERRAND_SECRET_ENV` into `env`. Exported for tests. */
export async function loadSecretsIntoEnv(env: NodeJS.ProcessEnv, fetchSecret: (secretId: string, variable: string) => Promise<string> = fetchSecretString): Promise<void> {
  const raw = env.ERRAND_SECRET_ENV;
  if (!raw) return;
  const mapping = secretEnvSchema.safeParse(JSON.parse(raw));
  if (!mapping.success) throw new Error(`ERRAND_SECRET_ENV is invalid: ${mapping.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  await Promise.all(
    Object.entries(mapping.data).map(async ([variable, { secretId, jsonKey }]) => {
      const secretString = await fetchSecret(secretId, variable);
      env[variable] = jsonKey === undefined ? secretString : pickJsonKey(secretString, jsonKey, secretId, variable);
    }),
  );
}

let secretsLoaded: Promise<void> | undefined;

/** The deployed function's handler (`index.handler`). */
export const handler: ApiGatewayV2Handler = async (event, context) => {
  // Once per container; a failure is not cached, so the next invocation tries again.
  secretsLoaded ??= loadSecretsIntoEnv(process.env).catch((error: unknown) => {
    secretsLoaded = undefined;
    throw error;
  });
  await secretsLoaded;
  return apiHandler(event, context);
};
