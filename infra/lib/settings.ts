import { z } from 'zod';
import { workerDeploymentIdMaxChars } from '../../src/contracts/limits/workflow';
import { toolPolicyConfigSchema } from '../../src/tools/tool-policy';
import { deploymentNameAllowed, deploymentNamePattern } from '../../src/settings/worker-deployment';
import { workerBuildsSchema } from './worker-builds';

/**
 * The deployment's parameters, read from CDK context (`cdk deploy -c temporalAddress=... -c ...` or the
 * `context` of infra/cdk.json) and checked once at synthesis: an error names the context key and what
 * would be valid, before anything reaches CloudFormation.
 */

/** How the worker and the API authenticate to Temporal. */
export const TemporalAuth = {
  /** Temporal Cloud API key (secret field `apiKey`). */
  apiKey: 'api-key',
  /** mTLS client certificate and key, PEM (secret fields `tlsCert`, `tlsKey`). */
  mtls: 'mtls',
  /** No credentials: a self-hosted cluster reached inside the VPC without TLS. */
  none: 'none',
} as const;
/** One of {@link TemporalAuth}. */
export type TemporalAuth = (typeof TemporalAuth)[keyof typeof TemporalAuth];

const envName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, { error: 'an environment variable name such as OPENAI_API_KEY' });

const settingsSchema = z.strictObject({
  temporalAddress: z.string().regex(/^[^:/\s]+:\d{1,5}$/, { error: 'host:port without a scheme, e.g. "my-ns.a1b2c.tmprl.cloud:7233"' }),
  temporalNamespace: z.string().min(1, { error: 'the Temporal namespace, e.g. "my-ns.a1b2c"' }),
  temporalAuth: z.enum([TemporalAuth.apiKey, TemporalAuth.mtls, TemporalAuth.none]).default(TemporalAuth.apiKey),
  /** Temporal's HTTP API: the API then starts delegations and sessions through it (ERRAND_TEMPORAL_HTTP_URL; decision 0019). */
  temporalHttpUrl: z.string().regex(/^https?:\/\/[^\s?#@]+$/, { error: 'the http(s) URL of Temporal\'s HTTP API, without query or credentials, e.g. "https://temporal-http.example.com"' }).optional(),
  taskQueue: z.string().min(1).default('errand'),
  /** Worker tasks (processes) on the task queue. */
  workerCount: z.coerce.number().int().min(0).max(100).default(2),
  workerCpu: z.coerce.number().int().refine((value) => [256, 512, 1024, 2048, 4096, 8192, 16384].includes(value), { error: 'a Fargate CPU size: 256, 512, 1024, 2048, 4096, 8192 or 16384' }).default(1024),
  workerMemoryMiB: z.coerce.number().int().min(512).max(122_880).default(2048),
  /** The Temporal worker deployment of the versioned workers (ERRAND_WORKER_DEPLOYMENT_NAME); used with `workerBuilds`. */
  workerDeploymentName: z
    .string()
    .max(workerDeploymentIdMaxChars, { error: `at most ${workerDeploymentIdMaxChars} characters` })
    .regex(deploymentNamePattern, { error: `the worker deployment name (ERRAND_WORKER_DEPLOYMENT_NAME): use ${deploymentNameAllowed}` })
    .default('errand'),
  /**
   * The builds whose versioned workers run, one service each (decision 0034). Not set: one unversioned
   * service, as before versioning.
   */
  workerBuilds: workerBuildsSchema.optional(),
  /** With `workerBuilds`: keep the unversioned service too, for the first versioned deploy (docs/deploy.md). */
  unversionedWorkers: z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')], { error: 'true or false' }).default(false),
  /** Days CloudWatch keeps the worker's, the API's and the access logs. */
  logRetentionDays: z.coerce.number().int().refine((value) => [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653].includes(value), { error: 'a CloudWatch retention: 1, 3, 5, 7, 14, 30, 60, 90, 180, 365, ...' }).default(30),
  /** Days a large payload is kept; longer than the longest delegation plus the time its result is read. */
  payloadExpirationDays: z.coerce.number().int().min(1).max(3650).default(90),
  /** ERRAND_PROVIDERS of the worker and the API (JSON array; keys are named by apiKeyEnv, never given). */
  providers: z.string().default('[]'),
  /** Environment variables holding LLM keys: each is a field of the LLM keys secret. */
  llmKeyNames: z.array(envName).default([]),
  natGateways: z.coerce.number().int().min(0).max(3).default(1),
  /**
   * The workers' ERRAND_TOOL_POLICY (JSON). Default: model-run commands wait for a person's approval — the
   * multi-tenant default, since Fargate tasks cannot run the bubblewrap sandbox (docs/security.md).
   */
  toolPolicy: z.string().default(JSON.stringify({ default: 'allow', rules: { developer__run_command: 'ask' }, approvers: 'human' })),
});

/** The parsed deployment parameters. */
export type ErrandSettings = z.output<typeof settingsSchema>;
/** Deployment parameters as given (strings from the command line, or typed values from cdk.json). */
export type ErrandSettingsInput = z.input<typeof settingsSchema>;

/** Keys of the parameters, in the order the docs list them. */
export const settingKeys = Object.keys(settingsSchema.shape) as (keyof ErrandSettings)[];

/** Validates the parameters; `raw` maps context keys to values (undefined = not set). */
export function parseSettings(raw: Record<string, unknown>): ErrandSettings {
  const input: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    // `-c llmKeyNames=OPENAI_API_KEY,ANTHROPIC_API_KEY` arrives as one string.
    input[key] = key === 'llmKeyNames' && typeof value === 'string' ? value.split(',').map((name) => name.trim()).filter(Boolean) : value;
  }
  const parsed = settingsSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const key = issue.path.map(String).join('.') || '(context)';
      const missing = issue.code === 'invalid_type' && input[String(issue.path[0])] === undefined;
      return missing ? `${key} is required: pass -c ${key}=... to cdk (or set it in infra/cdk.json "context")` : `${key}: ${issue.message}`;
    });
    throw new Error(`invalid errand deployment parameters:\n  ${problems.join('\n  ')}`);
  }
  const { temporalHttpUrl, temporalAuth, workerBuilds, unversionedWorkers } = parsed.data;
  if (input.workerDeploymentName !== undefined && workerBuilds === undefined) {
    throw new Error(`workerDeploymentName="${parsed.data.workerDeploymentName}" is set but workerBuilds is not: the deployment name applies to versioned workers only; give workerBuilds (e.g. -c workerBuilds='[{"buildId":"2026.12.1"}]', docs/deploy.md) or leave workerDeploymentName unset for unversioned workers`);
  }
  if (unversionedWorkers && workerBuilds === undefined) {
    throw new Error('unversionedWorkers=true needs workerBuilds: without workerBuilds the stack runs only unversioned workers anyway; it keeps them beside the versioned builds during the first versioned deploy (docs/deploy.md)');
  }
  if (temporalHttpUrl !== undefined && temporalAuth === TemporalAuth.mtls) {
    throw new Error('temporalHttpUrl cannot be used with temporalAuth=mtls: the HTTP client cannot present a client certificate; leave temporalHttpUrl unset (the API then starts through gRPC)');
  }
  if (temporalHttpUrl !== undefined && temporalAuth === TemporalAuth.apiKey && !temporalHttpUrl.startsWith('https://')) {
    throw new Error(`temporalHttpUrl "${temporalHttpUrl}" must be https:// with temporalAuth=api-key: the key is only ever sent over TLS`);
  }
  let providers: unknown;
  try {
    providers = JSON.parse(parsed.data.providers);
  } catch (error) {
    throw new Error(`providers is not valid JSON (the ERRAND_PROVIDERS array): ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!Array.isArray(providers)) throw new Error('providers must be a JSON array (the ERRAND_PROVIDERS value)');
  let toolPolicy: unknown;
  try {
    toolPolicy = JSON.parse(parsed.data.toolPolicy);
  } catch (error) {
    throw new Error(`toolPolicy is not valid JSON (the ERRAND_TOOL_POLICY object): ${error instanceof Error ? error.message : String(error)}`);
  }
  const policy = toolPolicyConfigSchema.safeParse(toolPolicy);
  if (!policy.success) throw new Error(`toolPolicy is not a valid tool policy: ${policy.error.issues.map((issue) => `${issue.path.join('.') || '(top level)'}: ${issue.message}`).join('; ')}`);
  return parsed.data;
}
