import type { ModelAliasTable } from '../contracts/agent-definition';
import { Context } from '@temporalio/activity';
import type { AgentMemoryOptions } from '../activities/agent-memory';
import { memorySettingsFromEnv } from '../settings/memory-settings';
import { readTenantSpend, recordTenantSpend } from '../activities/tenant-spend-book';
import { TenantSpendGuard } from '../activities/tenant-spend-guard';
import type { SpendRecord } from '../contracts/tenant-spend';
import type { BlobStore } from '../activities/blob-store';
import { createBlobStore } from '../activities/blob-store-factory';
import { ConversationStore } from '../activities/conversation-store';
import type { HeartbeatSettings } from '../activities/heartbeat';
import { InFlightCalls } from '../activities/in-flight-calls';
import type { ErrandConfig } from '../settings/config';
import type { ChatModel, ModelRegistry } from '../llm/model-port';
import { createModelRegistry } from '../llm/model-registry';
import type { ToolsetRegistry } from '../tools/toolset-registry';
import { createToolsetRegistryFromConfig, type WorkerToolsetRegistry } from '../tools/toolset-registry-factory';
import { checkSandbox, type CommandOptions } from '../tools/command-environment';
import { probeProcessContainment } from '../tools/process-containment';
import { RecipeServerVerifier } from '../sources/recipe-server-trust';
import type { DeveloperToolsetOptions } from '../tools/developer-toolset';
import type { PathRules } from '../tools/confine-path';
import type { ToolPolicyConfig } from '../tools/tool-policy';
import { configuredPlanning, type PlanContext } from '../activities/plan-context';
import type { SubagentActivitySettings } from '../contracts/subagent';
import type { SourceResolver } from '../sources/source-resolver';
import { createSharedSources } from '../sources/shared-sources';
import type { PlanWorkflowRunInput, PlanWorkflowRunOutput } from '../contracts/activities';
import { planRunWorkflowCall } from './workflow-run-planner';

/** The real parts a worker's activities use. */
export interface WorkerDependencies {
  models: ModelRegistry;
  toolsets: WorkerToolsetRegistry;
  blobs: BlobStore;
  conversations: ConversationStore;
  /** Source resolver per working directory. */
  resolverFor(workingDir: string): SourceResolver;
  planning: Omit<PlanContext, 'resolver'>;
  /** The operator's tool policy (allow / ask / deny). */
  toolPolicy?: ToolPolicyConfig;
  /** Output-token limit when nothing more specific sets one (`ERRAND_MAX_OUTPUT_TOKENS`). */
  defaultMaxOutputTokens: number;
  /** Share of the context window at which a conversation is compacted (`ERRAND_COMPACT_AT`). */
  compactAt: number;
  /** How agents' memory folders are kept (`ERRAND_MEMORY_REVISIONS_KEPT`). */
  memory?: AgentMemoryOptions;
  /** How model commands run (environment allow-list, sandbox): recipe checks run the same way. */
  commands: CommandOptions;
  /** The worker's path rules (working root, errand's own folders): also where worktrees may go. */
  paths: PathRules;
  /** Where `isolation: worktree` puts worktrees (`ERRAND_WORKTREE_DIR`); absent: inside the repository's git directory. */
  worktreeDir?: string;
  /** How model and tool calls heartbeat, and this worker's running calls that a workflow's cancel aborts. */
  heartbeats: HeartbeatSettings & { inFlight: InFlightCalls };
  /** Checks each model call against the tenant's daily cap and reports its price (only with `ERRAND_TENANT_DAILY_COST_USD`). */
  tenantSpend?: TenantSpendGuard;
  /** The operator's daily cost cap per tenant (`ERRAND_TENANT_DAILY_COST_USD`), micro-dollars: `delegate` checks it before planning. */
  tenantDailyCostMicroUsd?: number;
  /** The depth limit and activity settings the agents of a workflow run get (`ERRAND_MAX_DEPTH`, ...), and the model aliases their `model` option may name. */
  subagentDefaults: { maxDepth: number; activity: SubagentActivitySettings; modelAliases: ModelAliasTable };
  /** Plans a `run_workflow` call (workflow-run-planner.ts). */
  planWorkflowRun?: (input: PlanWorkflowRunInput) => Promise<PlanWorkflowRunOutput>;
}

/**
 * The worker's sources: the operator's and user-level stores built once and shared, and a resolver per
 * working directory (its project folders) kept in a bounded least-recently-used map (shared-sources.ts).
 */
export function createResolverCache(config: ErrandConfig, homeDirectory?: string): (workingDir: string) => SourceResolver {
  const sources = createSharedSources(config, homeDirectory);
  return (workingDir) => sources.resolverFor(workingDir);
}

/** Planning settings from configuration. */
export function planningSettings(config: ErrandConfig, _models: ModelRegistry, toolsets: ToolsetRegistry, memoryStore?: BlobStore): Omit<PlanContext, 'resolver'> {
  return {
    ...configuredPlanning(config, memoryStore),
    availableToolsets: toolsets.names(),
    paths: developerToolsetOptions(config).paths ?? {},
  };
}

/** Builds the worker's dependencies from configuration. `scripted` supplies in-process models by provider name. */
export function createWorkerDependencies(
  config: ErrandConfig,
  options: { scripted?: Record<string, ChatModel>; env?: NodeJS.ProcessEnv; homeDirectory?: string } = {},
): WorkerDependencies {
  // Every worker of a deployment must see the same blobs: S3 there, a local folder on one machine.
  const blobs: BlobStore = createBlobStore(config);
  const models = createModelRegistry(config.providers, {
    env: options.env ?? process.env,
    answerLimits: { maxBytes: config.model.answerMaxBytes, maxMs: config.model.answerMaxMs },
    ...(options.scripted ? { scripted: options.scripted } : {}),
  });
  const sources = createSharedSources(config, options.homeDirectory);
  const resolverFor = (workingDir: string): SourceResolver => sources.resolverFor(workingDir);
  const toolsets = createToolsetRegistryFromConfig({
    mcpServers: config.tools.mcpServers,
    ...(config.tools.settings.idleMs !== undefined ? { idleMs: config.tools.settings.idleMs } : {}),
    ...(config.tools.settings.callTimeoutMs !== undefined ? { callTimeoutMs: config.tools.settings.callTimeoutMs } : {}),
    env: options.env ?? process.env,
    allowRecipeServers: config.tools.settings.allowRecipeServers ?? false,
    recipeVerifier: new RecipeServerVerifier({
      resolverFor,
      trust: { workingRoot: config.workingDir, trustedDirs: config.tools.settings.trustedRecipeDirs ?? [] },
      paths: developerToolsetOptions(config).paths ?? {},
      ...(config.tools.settings.recipeEnvKeys ? { allowedEnvKeys: config.tools.settings.recipeEnvKeys } : {}),
    }),
    developer: developerToolsetOptions(config, options.env ?? process.env),
  });
  return {
    models,
    toolsets,
    blobs,
    conversations: new ConversationStore(blobs),
    resolverFor,
    planning: planningSettings(config, models, toolsets, blobs),
    ...(config.toolPolicy ? { toolPolicy: config.toolPolicy } : {}),
    defaultMaxOutputTokens: config.model.maxOutputTokens,
    compactAt: config.model.compactAt,
    memory: memorySettingsFromEnv(options.env ?? process.env),
    // A tenant's priced calls count against its daily cap only where the operator set one (each report is a signal).
    ...(config.caps.tenantDailyCostMicroUsd !== undefined
      ? {
          tenantSpend: new TenantSpendGuard(
            {
              read: (tenant: string, now: number) => readTenantSpend(Context.current().client, tenant, now),
              record: (tenant: string, record: SpendRecord, now: number) => recordTenantSpend(Context.current().client, Context.current().info.taskQueue, tenant, record, now),
            },
            config.caps.tenantDailyCostMicroUsd,
          ),
          tenantDailyCostMicroUsd: config.caps.tenantDailyCostMicroUsd,
        }
      : {}),
    commands: commandOptions(config, options.env ?? process.env),
    paths: developerToolsetOptions(config).paths ?? {},
    ...(config.worktreeDir !== undefined ? { worktreeDir: config.worktreeDir } : {}),
    heartbeats: { liveTextIntervalMs: config.model.liveTextIntervalMs, inFlight: new InFlightCalls() },
    subagentDefaults: { maxDepth: config.subagent.maxDepth, activity: config.subagent.activity, modelAliases: config.sources.modelAliases },
    planWorkflowRun: (input) => planRunWorkflowCall({ config, placesFor: (workingDir) => sources.workflowPlacesFor(workingDir), blobs }, input),
  };
}

/** How run_command runs on this worker: the environment allow-list and, if configured, the sandbox. */
export function commandOptions(config: ErrandConfig, env: NodeJS.ProcessEnv = process.env): CommandOptions {
  return {
    envNames: config.commands.env,
    env,
    hookUrls: config.commands.hookUrls,
    ...(config.commands.sandbox === 'bwrap'
      ? { sandbox: { kind: 'bwrap' as const, network: config.commands.network, readOnlyPaths: config.commands.readOnlyPaths } }
      : { containment: probeProcessContainment() }),
  };
}

/**
 * The developer tools' settings: tenant folders under the working root, errand's own folders (the data
 * folder with the blob store and the dev server's database, and the git cache) off limits wherever they
 * are, and how commands run.
 */
export function developerToolsetOptions(config: ErrandConfig, env: NodeJS.ProcessEnv = process.env): DeveloperToolsetOptions {
  return {
    paths: { workingRoot: config.workingDir, denied: [...new Set([config.dataDir, config.sources.gitCacheDir])] },
    commands: commandOptions(config, env),
    searchTextRegexDeadlineMs: config.searchTextRegexDeadlineMs,
  };
}

/**
 * Checks what a worker needs from its machine before it polls: with `ERRAND_SANDBOX=bwrap`, that bwrap is
 * installed and can create its sandbox here. Throws an error that names the setting and what to do.
 */
export async function checkWorkerEnvironment(config: ErrandConfig, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const sandbox = commandOptions(config, env).sandbox;
  if (sandbox) await checkSandbox(sandbox, { env });
}
