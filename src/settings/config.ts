import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { defaultMaxOutputTokens, defaultModelAnswerMaxBytes, defaultModelAnswerMaxMs } from '../contracts/limits/llm';
import { defaultAllowBypassPermissions } from '../contracts/limits/sources';
import { searchTextRegexDeadlineMs } from '../contracts/limits/tools';
import { workflowMaxAgents, workflowMaxConcurrentAgents } from '../contracts/limits/workflow-scripts';
import {
  defaultMaxDepth,
  defaultMaxTurns,
  defaultModelCallTimeoutMs,
  defaultModelHeartbeatTimeoutMs,
  defaultApprovalTimeoutMs,
  defaultCompletedTaskTtlMs,
  defaultMaxBackgroundTasks,
  defaultModelMaximumAttempts,
  defaultSessionMaxTurns,
  defaultSessionIdleTimeoutMs,
  defaultCompactAt,
  defaultLiveTextIntervalMs,
  liveTextIntervalBounds,
  defaultMaxContinuables,
  defaultContinuableIdleTimeoutMs,
  defaultMaxQueuedMessages,
  maxQueuedMessagesCeiling,
  defaultTaskWaitTimeoutMs,
  defaultToolCallTimeoutMs,
  maxDepthCeiling,
  maxTurnsCeiling,
} from '../contracts/limits/workflow';
import type { SubagentActivitySettings, TaskLimits } from '../contracts/subagent';
import { storeConfigSchema, type StoreConfig } from '../sources/store-config';
import {
  ConfigError,
  intFromEnv,
  dataDirFileSchema,
  dataDirSetting,
  formatIssues,
  readConfigFile,
  temporalFileSchema,
  temporalSettings,
  type TemporalSettings,
} from './client-config';
import { capSettings, capsFileSchema, type CapSettings } from './cap-settings';
import { commandSettings, commandsFileSchema, type CommandSettings } from './command-settings';
import { mcpServerListSchema, mcpSettingsSchema, type McpServerConfig, type McpSettings } from '../tools/mcp-config';
import { toolPolicyConfigSchema, type ToolPolicyConfig } from '../tools/tool-policy';
import { modelIds, providerConfigSchema, type ProviderConfig } from '../llm/provider-config';
import { workerDeploymentFromEnv, type WorkerDeploymentSettings } from './worker-deployment';

/**
 * errand's configuration, parsed once into a typed object (DESIGN.md convention 8). Sources, in order of
 * precedence: environment variables, then the JSON file named by `ERRAND_CONFIG`, then defaults. Every
 * error names the setting and how to set it. The settings client commands need (Temporal, the data
 * directory) are read by client-config.ts, which this builds on; model-run command settings by
 * command-settings.ts.
 */

export { ConfigError, defaultDataDir, intFromEnv, type ClientConfig, loadClientConfig } from './client-config';
export { CommandSandbox, type CommandSettings } from './command-settings';

const fileSchema = z.strictObject({
  temporal: temporalFileSchema.optional(),
  providers: z.array(providerConfigSchema).optional(),
  defaultModel: z.strictObject({ provider: z.string().min(1), model: z.string().min(1) }).optional(),
  dataDir: dataDirFileSchema.optional(),
  /** Working root: each tenant's API-started delegations and sessions work in `<workingDir>/<tenant>`. */
  workingDir: z.string().min(1).optional(),
  /** Where `isolation: worktree` puts worktrees: relative to the repository's top folder, or absolute. */
  worktreeDir: z.string().min(1).optional(),
  commands: commandsFileSchema.optional(),
  /** The operator's caps of time and money (cap-settings.ts). */
  caps: capsFileSchema.optional(),
  /** Configured source stores, in search order. */
  stores: z.array(storeConfigSchema).optional(),
  /** Claude Code agent model aliases (`sonnet`, `opus`, `haiku`) → `model` or `provider/model`. */
  modelAliases: z.record(z.string(), z.string().min(1)).optional(),
  /** MCP servers offered as toolsets (by name). */
  mcpServers: mcpServerListSchema.optional(),
  mcp: mcpSettingsSchema.optional(),
  toolPolicy: toolPolicyConfigSchema.optional(),
  /** Whether an agent file's `permissionMode: bypassPermissions` may be used. */
  allowBypassPermissions: z.boolean().optional(),
  tasks: z.strictObject({
    maxBackgroundTasks: z.number().int().min(1).max(1_000).optional(),
    maxContinuables: z.number().int().min(1).max(1_000).optional(),
    waitTimeoutMs: z.number().int().min(1_000).optional(),
    completedTaskTtlMs: z.number().int().min(1_000).optional(),
    continuableIdleTimeoutMs: z.number().int().min(1_000).optional(),
    maxQueuedMessages: z.number().int().min(1).max(maxQueuedMessagesCeiling).optional(),
    sessionIdleTimeoutMs: z.number().int().min(1_000).optional(),
  }).optional(),
  model: z.strictObject({
    maxOutputTokens: z.number().int().min(1).max(1_000_000).optional(),
    compactAt: z.number().min(0.1).max(0.95).optional(),
  }).optional(),
  subagent: z.strictObject({
    maxTurns: z.number().int().min(1).max(maxTurnsCeiling).optional(),
    maxDepth: z.number().int().min(1).max(maxDepthCeiling).optional(),
    modelCallTimeoutMs: z.number().int().min(1_000).optional(),
    modelHeartbeatTimeoutMs: z.number().int().min(2_000).optional(),
    toolCallTimeoutMs: z.number().int().min(1_000).optional(),
    modelMaximumAttempts: z.number().int().min(1).max(100).optional(),
  }).optional(),
});

/** The parsed configuration. */
export interface ErrandConfig {
  /**
   * Where Temporal is: `ERRAND_TEMPORAL_*` > `TEMPORAL_*` > the `temporal.toml` profile > the config file >
   * the local dev server. `connection` carries TLS / API key for Temporal Cloud or a secured cluster.
   */
  temporal: TemporalSettings;
  /**
   * The worker deployment version workers poll as (`ERRAND_WORKER_DEPLOYMENT_NAME` + `ERRAND_WORKER_BUILD_ID`,
   * decision 0030); undefined = unversioned workers, the default.
   */
  workerDeployment: WorkerDeploymentSettings | undefined;
  providers: ProviderConfig[];
  /**
   * Limits of workflow runs (SEMANTICS §7): agents of one run running at once, the default and the most a
   * run may ask for (`ERRAND_WORKFLOW_MAX_CONCURRENT_AGENTS`), and `agent()` calls one run may make
   * (`ERRAND_WORKFLOW_MAX_AGENTS`).
   */
  workflows: { maxConcurrentAgents: number; maxAgents: number };
  /** The model a delegation uses when nothing else chooses one; undefined when none is configured. */
  defaultModel: { provider: string; model: string } | undefined;
  /**
   * Folder for errand's own state: the blob store (unless `blobs` names S3), the dev server's database, the
   * git cache. Default: `$XDG_STATE_HOME/errand` (`~/.local/state/errand`), outside every working directory;
   * tools refuse paths inside it wherever it is.
   */
  dataDir: string;
  /** S3 blob store for conversations and stored outcomes (`ERRAND_BLOB_BUCKET`); absent = `<dataDir>/blobs`. */
  blobs: { bucket: string; prefix: string; endpoint?: string; region?: string; forcePathStyle?: boolean } | undefined;
  subagent: {
    maxTurns: number;
    maxDepth: number;
    activity: SubagentActivitySettings;
    /** Operator override of every delegation's provider (`ERRAND_SUBAGENT_PROVIDER`). */
    providerOverride: string | undefined;
    /** Operator override of every delegation's model (`ERRAND_SUBAGENT_MODEL`). */
    modelOverride: string | undefined;
  };
  /** Model calls one session message may cause (`ERRAND_SESSION_MAX_TURNS`). */
  sessionMaxTurns: number;
  /** A session ends after this long without a message or notice (`ERRAND_SESSION_IDLE_TIMEOUT_SECS`), ms. */
  sessionIdleTimeoutMs: number;
  /** Output tokens and context window (SEMANTICS §5). */
  model: {
    /** Output-token limit when nothing more specific sets one (`ERRAND_MAX_OUTPUT_TOKENS`). */
    maxOutputTokens: number;
    /** Share of the context window at which a conversation is compacted (`ERRAND_COMPACT_AT`). */
    compactAt: number;
    /** Least time between two heartbeats of a model call that carry new live text (`ERRAND_LIVE_TEXT_INTERVAL_MS`), ms. */
    liveTextIntervalMs: number;
    /** Most bytes of one answer errand reads before it ends the answer `truncated` (`ERRAND_MODEL_ANSWER_MAX_BYTES`). */
    answerMaxBytes: number;
    /** Longest time errand reads one answer before it ends it `truncated` (`ERRAND_MODEL_ANSWER_MAX_MS`), ms. */
    answerMaxMs: number;
  };
  /** The operator's tool policy (`toolPolicy` in the file or `ERRAND_TOOL_POLICY`); absent = allow all. */
  toolPolicy: ToolPolicyConfig | undefined;
  /** How long a tool call under `ask` waits for a decision (`ERRAND_APPROVAL_TIMEOUT_SECS`), ms. */
  approvalTimeoutMs: number;
  /** Whether agent files may use `permissionMode: bypassPermissions` (`ERRAND_ALLOW_BYPASS_PERMISSIONS`; default false). */
  allowBypassPermissions: boolean;
  tasks: TaskLimits;
  /**
   * The working root. API-started delegations and sessions of tenant `t` work in `<workingDir>/t` (made on
   * the worker when missing); with API auth off (one local user) in the root itself.
   */
  workingDir: string;
  /**
   * Where `isolation: worktree` puts a subagent's worktree (`ERRAND_WORKTREE_DIR`): relative to the
   * repository's top folder (`../.errand-worktrees`) or absolute; undefined = inside the repository's git
   * directory (`.git/errand-worktrees`), outside its work tree and inside the tenant's folder.
   */
  worktreeDir: string | undefined;
  /** How model-run commands run (environment allow-list, sandbox). */
  commands: CommandSettings;
  /** The operator's caps of time and money per delegation and session, and per tenant and day (cap-settings.ts). */
  caps: CapSettings;
  /** How long one search_text call may spend matching a regular expression (`ERRAND_SEARCH_TEXT_REGEX_DEADLINE_MS`), ms. */
  searchTextRegexDeadlineMs: number;
  tools: {
    mcpServers: McpServerConfig[];
    settings: McpSettings;
  };
  sources: {
    stores: StoreConfig[];
    /** `ERRAND_RECIPE_PATH`, as given. */
    recipePath: string | undefined;
    /** Where git-synced stores keep their checkouts. */
    gitCacheDir: string;
    modelAliases: Record<string, string>;
  };
}

function shareFromEnv(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0.1 || value > 0.95) {
    throw new ConfigError(`${name}="${raw}" is not valid: use a share of the context window from 0.1 to 0.95 (e.g. 0.8)`);
  }
  return value;
}

/**
 * The JSON value of setting `name`, checked by `schema`; undefined when it is not set. Not JSON, or not what
 * the schema takes, is an error that names the setting and, for JSON, what `expected` says it holds.
 */
function jsonFromEnv<T>(env: NodeJS.ProcessEnv, name: string, schema: z.ZodType<T>, expected: string): T | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    throw new ConfigError(`${name} is not valid JSON (${expected}): ${String(error)}`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new ConfigError(`${name} is invalid\n${formatIssues(parsed.error, name)}`);
  return parsed.data;
}

/**
 * The default model: ERRAND_DEFAULT_MODEL, the file's, or the first provider's; checked against the
 * providers (as is ERRAND_SUBAGENT_PROVIDER), with errors that name the setting and what is configured.
 */
function defaultModelOf(env: NodeJS.ProcessEnv, configured: ErrandConfig['defaultModel'], providers: ErrandConfig['providers']): ErrandConfig['defaultModel'] {
  let defaultModel = configured;
  if (env.ERRAND_DEFAULT_MODEL) {
    const [provider, ...rest] = env.ERRAND_DEFAULT_MODEL.split('/');
    const model = rest.join('/');
    if (!provider || !model) throw new ConfigError(`ERRAND_DEFAULT_MODEL="${env.ERRAND_DEFAULT_MODEL}" is not valid: use "<provider>/<model>", e.g. "openai/gpt-4.1-mini"`);
    defaultModel = { provider, model };
  }
  if (!defaultModel) {
    const first = providers[0];
    const model = first?.defaultModel ?? (first ? modelIds(first)[0] : undefined);
    if (first && model) defaultModel = { provider: first.name, model };
  }
  const providerOverride = env.ERRAND_SUBAGENT_PROVIDER;
  if (providerOverride && !providers.some((provider) => provider.name === providerOverride)) {
    throw new ConfigError(`ERRAND_SUBAGENT_PROVIDER="${providerOverride}" is not a configured provider; configured: ${providers.map((p) => p.name).join(', ') || '(none)'}`);
  }
  if (defaultModel) {
    const provider = providers.find((candidate) => candidate.name === defaultModel?.provider);
    if (!provider) {
      throw new ConfigError(`the default model names provider "${defaultModel.provider}", which is not configured; configured providers: ${providers.map((p) => p.name).join(', ') || '(none)'}`);
    }
    if (!modelIds(provider).includes(defaultModel.model)) {
      throw new ConfigError(`the default model "${defaultModel.model}" is not in the models of provider "${provider.name}" (${modelIds(provider).join(', ')})`);
    }
  }
  return defaultModel;
}

/** Reads and validates the configuration from the environment (and the file it names). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): ErrandConfig {
  const file = readConfigFile(env, cwd, fileSchema);

  const providers = jsonFromEnv(env, 'ERRAND_PROVIDERS', z.array(providerConfigSchema), 'expected an array of providers') ?? file.providers ?? [];

  const defaultModel = defaultModelOf(env, file.defaultModel, providers);

  const subagent = file.subagent ?? {};
  const temporal = temporalSettings(env, file.temporal);
  const dataDir = dataDirSetting(env, cwd, file.dataDir);
  const stores: StoreConfig[] = jsonFromEnv(env, 'ERRAND_STORES', z.array(storeConfigSchema), 'expected an array of stores: {type: directory|git|s3, ...}') ?? file.stores ?? [];
  const tasks = file.tasks ?? {};
  const mcpServers: McpServerConfig[] = jsonFromEnv(env, 'ERRAND_MCP_SERVERS', mcpServerListSchema, 'expected an array of MCP servers: {type: stdio|streamable_http, name, ...}') ?? file.mcpServers ?? [];
  const toolPolicy: ToolPolicyConfig | undefined = jsonFromEnv(env, 'ERRAND_TOOL_POLICY', toolPolicyConfigSchema, 'expected {"default": "allow", "rules": {"developer__run_command": "ask"}}') ?? file.toolPolicy;
  const allowRecipeServers = env.ERRAND_ALLOW_RECIPE_MCP_SERVERS;
  if (allowRecipeServers !== undefined && allowRecipeServers !== 'true' && allowRecipeServers !== 'false') {
    throw new ConfigError(`ERRAND_ALLOW_RECIPE_MCP_SERVERS="${allowRecipeServers}" is not valid: use true or false`);
  }
  const trustedRecipeDirs = trustedRecipeDirsFrom(env.ERRAND_TRUSTED_RECIPE_DIRS);
  const commands = commandSettings(env, file.commands, providers, mcpServers);
  const allowBypass = env.ERRAND_ALLOW_BYPASS_PERMISSIONS;
  if (allowBypass !== undefined && allowBypass !== 'true' && allowBypass !== 'false') {
    throw new ConfigError(`ERRAND_ALLOW_BYPASS_PERMISSIONS="${allowBypass}" is not valid: use true or false`);
  }
  const secondsFromEnv = (name: string) => {
    const value = intFromEnv(env, name, 1, 31_536_000);
    return value === undefined ? undefined : value * 1_000;
  };
  return {
    temporal,
    workerDeployment: workerDeploymentFromEnv(env),
    providers,
    workflows: {
      maxConcurrentAgents: intFromEnv(env, 'ERRAND_WORKFLOW_MAX_CONCURRENT_AGENTS', 1, 1_000, 'agents of one workflow run running at once') ?? workflowMaxConcurrentAgents,
      maxAgents: intFromEnv(env, 'ERRAND_WORKFLOW_MAX_AGENTS', 1, 100_000, 'agent() calls one workflow run may make') ?? workflowMaxAgents,
    },
    defaultModel,
    dataDir,
    blobs: env.ERRAND_BLOB_BUCKET
      ? {
          bucket: env.ERRAND_BLOB_BUCKET,
          prefix: env.ERRAND_BLOB_PREFIX ?? '',
          ...(env.ERRAND_BLOB_S3_ENDPOINT ? { endpoint: env.ERRAND_BLOB_S3_ENDPOINT } : {}),
          ...(env.ERRAND_BLOB_S3_REGION ?? env.AWS_REGION ? { region: env.ERRAND_BLOB_S3_REGION ?? env.AWS_REGION } : {}),
          ...(env.ERRAND_BLOB_S3_FORCE_PATH_STYLE === 'true' ? { forcePathStyle: true } : {}),
        }
      : undefined,
    workingDir: resolve(cwd, env.ERRAND_WORKING_DIR ?? file.workingDir ?? '.'),
    // Kept as given: a relative value is resolved against each repository's top folder, on the worker.
    worktreeDir: env.ERRAND_WORKTREE_DIR || file.worktreeDir || undefined,
    commands,
    caps: capSettings(env, file.caps, providers),
    searchTextRegexDeadlineMs: intFromEnv(env, 'ERRAND_SEARCH_TEXT_REGEX_DEADLINE_MS', 100, 600_000) ?? searchTextRegexDeadlineMs,
    toolPolicy,
    approvalTimeoutMs: secondsFromEnv('ERRAND_APPROVAL_TIMEOUT_SECS') ?? defaultApprovalTimeoutMs,
    allowBypassPermissions: allowBypass !== undefined ? allowBypass === 'true' : file.allowBypassPermissions ?? defaultAllowBypassPermissions,
    sessionMaxTurns: intFromEnv(env, 'ERRAND_SESSION_MAX_TURNS', 1, maxTurnsCeiling) ?? defaultSessionMaxTurns,
    sessionIdleTimeoutMs: secondsFromEnv('ERRAND_SESSION_IDLE_TIMEOUT_SECS') ?? tasks.sessionIdleTimeoutMs ?? defaultSessionIdleTimeoutMs,
    model: {
      maxOutputTokens: intFromEnv(env, 'ERRAND_MAX_OUTPUT_TOKENS', 1, 1_000_000) ?? file.model?.maxOutputTokens ?? defaultMaxOutputTokens,
      compactAt: shareFromEnv(env, 'ERRAND_COMPACT_AT') ?? file.model?.compactAt ?? defaultCompactAt,
      liveTextIntervalMs: intFromEnv(env, 'ERRAND_LIVE_TEXT_INTERVAL_MS', liveTextIntervalBounds.min, liveTextIntervalBounds.max, 'each heartbeat that reaches Temporal is a billable action') ?? defaultLiveTextIntervalMs,
      answerMaxBytes: intFromEnv(env, 'ERRAND_MODEL_ANSWER_MAX_BYTES', 1_024, 1024 * 1024 * 1024) ?? defaultModelAnswerMaxBytes,
      answerMaxMs: intFromEnv(env, 'ERRAND_MODEL_ANSWER_MAX_MS', 1_000, 86_400_000) ?? defaultModelAnswerMaxMs,
    },
    tasks: {
      maxBackgroundTasks: intFromEnv(env, 'ERRAND_MAX_BACKGROUND_TASKS', 1, 1_000) ?? tasks.maxBackgroundTasks ?? defaultMaxBackgroundTasks,
      maxContinuables: intFromEnv(env, 'ERRAND_MAX_CONTINUABLES', 1, 1_000) ?? tasks.maxContinuables ?? defaultMaxContinuables,
      waitTimeoutMs: secondsFromEnv('ERRAND_TASK_WAIT_TIMEOUT_SECS') ?? tasks.waitTimeoutMs ?? defaultTaskWaitTimeoutMs,
      completedTaskTtlMs: secondsFromEnv('ERRAND_COMPLETED_TASK_TTL_SECS') ?? tasks.completedTaskTtlMs ?? defaultCompletedTaskTtlMs,
      continuableIdleTimeoutMs: secondsFromEnv('ERRAND_CONTINUABLE_IDLE_TIMEOUT_SECS') ?? tasks.continuableIdleTimeoutMs ?? defaultContinuableIdleTimeoutMs,
      maxQueuedMessages: intFromEnv(env, 'ERRAND_MAX_QUEUED_MESSAGES', 1, maxQueuedMessagesCeiling) ?? tasks.maxQueuedMessages ?? defaultMaxQueuedMessages,
    },
    tools: {
      mcpServers,
      settings: {
        ...file.mcp,
        ...(intFromEnv(env, 'ERRAND_MCP_IDLE_MS', 1_000, 86_400_000) !== undefined ? { idleMs: intFromEnv(env, 'ERRAND_MCP_IDLE_MS', 1_000, 86_400_000) } : {}),
        ...(allowRecipeServers !== undefined ? { allowRecipeServers: allowRecipeServers === 'true' } : {}),
        ...(trustedRecipeDirs !== undefined ? { trustedRecipeDirs } : {}),
      },
    },
    sources: {
      stores,
      recipePath: env.ERRAND_RECIPE_PATH,
      gitCacheDir: resolve(cwd, env.ERRAND_GIT_CACHE_DIR ?? join(dataDir, 'git-cache')),
      modelAliases: file.modelAliases ?? {},
    },
    subagent: {
      maxTurns: intFromEnv(env, 'ERRAND_SUBAGENT_MAX_TURNS', 1, maxTurnsCeiling) ?? subagent.maxTurns ?? defaultMaxTurns,
      maxDepth: intFromEnv(env, 'ERRAND_MAX_DEPTH', 1, maxDepthCeiling) ?? subagent.maxDepth ?? defaultMaxDepth,
      activity: {
        modelCallTimeoutMs: intFromEnv(env, 'ERRAND_MODEL_CALL_TIMEOUT_MS', 1_000, 86_400_000) ?? subagent.modelCallTimeoutMs ?? defaultModelCallTimeoutMs,
        modelHeartbeatTimeoutMs: intFromEnv(env, 'ERRAND_MODEL_HEARTBEAT_TIMEOUT_MS', 2_000, 3_600_000) ?? subagent.modelHeartbeatTimeoutMs ?? defaultModelHeartbeatTimeoutMs,
        toolCallTimeoutMs: intFromEnv(env, 'ERRAND_TOOL_CALL_TIMEOUT_MS', 1_000, 86_400_000) ?? subagent.toolCallTimeoutMs ?? defaultToolCallTimeoutMs,
        modelMaximumAttempts: intFromEnv(env, 'ERRAND_MODEL_MAX_ATTEMPTS', 1, 100) ?? subagent.modelMaximumAttempts ?? defaultModelMaximumAttempts,
      },
      providerOverride: env.ERRAND_SUBAGENT_PROVIDER || undefined,
      modelOverride: env.ERRAND_SUBAGENT_MODEL || undefined,
    },
  };
}

/**
 * `ERRAND_TRUSTED_RECIPE_DIRS`: folders inside the working root whose recipes the operator vouches for, so
 * their MCP servers may start (with `ERRAND_ALLOW_RECIPE_MCP_SERVERS=true`). Absolute, ":"-separated.
 */
function trustedRecipeDirsFrom(value: string | undefined): string[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const dirs = value.split(':').map((path) => path.trim()).filter((path) => path !== '');
  const relative = dirs.filter((path) => !isAbsolute(path));
  if (relative.length > 0) {
    throw new ConfigError(`ERRAND_TRUSTED_RECIPE_DIRS: ${relative.map((path) => `"${path}"`).join(', ')} ${relative.length === 1 ? 'is' : 'are'} not absolute; give absolute folders, ":"-separated (e.g. "/srv/errand/tenants/acme/.goose/recipes")`);
  }
  return dirs.map((path) => resolve(path));
}
