import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Context } from '@temporalio/activity';
import { NativeConnection, Worker, type ActivityInterceptorsFactory, type InjectedSinks, type WorkerOptions } from '@temporalio/worker';
import { readTenantSpend, recordTenantSpend } from './activities/tenant-spend-book';
import { TenantSpendGuard } from './activities/tenant-spend-guard';
import type { SpendRecord } from './contracts/tenant-spend';
import type { BlobStore } from './activities/blob-store';
import { createBlobStore } from './activities/blob-store-factory';
import { ConversationStore } from './activities/conversation-store';
import { createOrchestrationActivities } from './activities/orchestration-activities';
import { resetStickyOnRetry } from './activities/sticky-reset';
import { createAgentLoopActivities } from './activities/agent-loop-activities';
import { createRunActivities } from './activities/run-activities';
import { createWorkflowRunActivities } from './activities/workflow-run-activities';
import { commonJsExports } from './common-js-exports';
import type { HeartbeatSettings } from './activities/heartbeat';
import { InFlightCalls, inFlightSinks } from './activities/in-flight-calls';
import { loadConfig, type ErrandConfig } from './config';
import { defaultMaxCachedWorkflows, defaultWorkerVersioningBehavior, defaultWorkflowThreads, heartbeatThrottleMs } from './contracts/limits';
import { workerTuningFromEnv } from './worker-tuning';
import type { WorkerDeploymentSettings } from './worker-deployment';
import { installLogging, providerApiKeys } from './observability/logging';
import { currentTracing, startTracing, stopTracing, type Tracing } from './observability/tracing';
import { traceSinks, type SpanSink } from './observability/workflow-spans';
import type { TraceSinks } from './contracts/trace-sinks';
import { projectRoot } from './dev/tool-paths';
import { workflowBundleOptions, workflowTraceInterceptorModule } from './workflow-bundle-options';
import type { ChatModel, ModelRegistry } from './llm/model-port';
import { createModelRegistry, providerChoices } from './llm/provider-config';
import type { ToolsetRegistry } from './tools/toolset-registry';
import { createToolsetRegistryFromConfig, type WorkerToolsetRegistry } from './tools/toolset-registry-factory';
import { checkSandbox, type CommandOptions } from './tools/command-environment';
import { probeProcessContainment, processContainmentSummary } from './tools/process-containment';
import { RecipeServerVerifier } from './tools/recipe-server-trust';
import type { DeveloperToolsetOptions } from './tools/developer-toolset';
import type { PathRules } from './tools/confine-path';
import type { ToolPolicyConfig } from './tools/tool-policy';
import type { PlanContext } from './activities/plan-delegation';
import type { SubagentActivitySettings } from './contracts/subagent';
import type { SourceResolver } from './sources/source-resolver';
import { createSharedSources } from './sources/shared-sources';
import { checkSearchAttributes } from './temporal/search-attribute-check';

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
  /** The depth limit and activity settings the agents of a workflow run get (`ERRAND_MAX_DEPTH`, ...). */
  subagentDefaults: { maxDepth: number; activity: SubagentActivitySettings };
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
    providers: providerChoices(config.providers),
    configuredDefault: config.defaultModel,
    override: {
      ...(config.subagent.providerOverride ? { provider: config.subagent.providerOverride } : {}),
      ...(config.subagent.modelOverride ? { model: config.subagent.modelOverride } : {}),
    },
    configuredMaxTurns: config.subagent.maxTurns,
    configuredMaxOutputTokens: config.model.maxOutputTokens,
    caps: config.caps,
    availableToolsets: toolsets.names(),
    tasks: config.tasks,
    approvalTimeoutMs: config.approvalTimeoutMs,
    allowBypassPermissions: config.allowBypassPermissions,
    mcp: {
      allowRecipeServers: config.tools.settings.allowRecipeServers ?? false,
      ...(config.tools.settings.recipeEnvKeys ? { recipeEnvKeys: config.tools.settings.recipeEnvKeys } : {}),
      workingRoot: config.workingDir,
      ...(config.tools.settings.trustedRecipeDirs ? { trustedRecipeDirs: config.tools.settings.trustedRecipeDirs } : {}),
    },
    paths: developerToolsetOptions(config).paths ?? {},
    ...(memoryStore ? { memoryStore } : {}),
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
  const resolverFor = createResolverCache(config, options.homeDirectory);
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
    subagentDefaults: { maxDepth: config.subagent.maxDepth, activity: config.subagent.activity },
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

/**
 * Where the workflow code comes from: `ERRAND_WORKFLOW_BUNDLE` when set; else the prebuilt bundle
 * (production: `npm run build` writes dist/workflow-bundle.js) when it is at least as new as every source file
 * (a checkout whose sources changed after a build must not run the workflows of the old build beside the
 * activities of the new sources); else the sources, bundled at start.
 */
export function workflowSource(env: NodeJS.ProcessEnv = process.env, root: string = projectRoot): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions'> {
  if (env.ERRAND_WORKFLOW_BUNDLE) {
    if (existsSync(env.ERRAND_WORKFLOW_BUNDLE)) return { workflowBundle: { codePath: env.ERRAND_WORKFLOW_BUNDLE } };
    throw new Error(`ERRAND_WORKFLOW_BUNDLE=${env.ERRAND_WORKFLOW_BUNDLE} does not exist; run "npm run build" or unset it`);
  }
  const prebuilt = join(root, 'dist', 'workflow-bundle.js');
  const sources = join(root, 'src');
  if (existsSync(prebuilt) && (!existsSync(sources) || newestModification(sources) <= statSync(prebuilt).mtimeMs)) return { workflowBundle: { codePath: prebuilt } };
  return workflowsFromSources();
}

/** The newest modification time of the files under a folder (a few milliseconds for errand's sources). */
function newestModification(folder: string): number {
  let newest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestModification(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** The workflow sources, bundled by the worker at start with errand's bundle options (the sandbox setup). */
export function workflowsFromSources(): Pick<WorkerOptions, 'workflowsPath' | 'bundlerOptions'> {
  const { workflowsPath, preloadModules } = workflowBundleOptions();
  return { workflowsPath, bundlerOptions: { preloadModules } };
}

/** Options of {@link createErrandWorker}. */
export interface ErrandWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  dependencies: WorkerDependencies;
  workflows?: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions'>;
  /** The process's trace export; default: what `startTracing` started in this process, if anything. */
  tracing?: Tracing;
  /** The worker deployment version to poll as (decision 0030); absent: an unversioned worker. */
  deployment?: WorkerDeploymentSettings;
  /** Extra worker options (tuning, identity). */
  tuning?: Partial<Pick<WorkerOptions, 'maxConcurrentActivityTaskExecutions' | 'maxConcurrentWorkflowTaskExecutions' | 'maxCachedWorkflows' | 'workflowThreadPoolSize' | 'identity' | 'shutdownGraceTime'>>;
}

/**
 * The worker's side of tracing. On: Temporal's activity interceptors (each activity a span, child of the
 * workflow's, with trace ids on its log lines) and the sink through which errand's workflow trace
 * interceptors' spans leave the sandbox to the exporter. Off: a sink that drops those spans (the interceptors
 * are in every workflow bundle; a workflow calling a sink no worker registered would log an error per span).
 */
export async function traceWorkerOptions(tracing: Tracing | undefined): Promise<{ sinks: InjectedSinks<TraceSinks>; activity: ActivityInterceptorsFactory[] }> {
  if (!tracing) return { sinks: traceSinks(undefined), activity: [] };
  // Loaded only with tracing on: the interceptors' worker half brings the OpenTelemetry SDK.
  // A CommonJS file: in the CLI bundle its exports arrive only as `default` (commonJsExports).
  const loaded = await import('@temporalio/interceptors-opentelemetry/lib/worker/index.js');
  const { OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } = commonJsExports(loaded, 'OpenTelemetryActivityInboundInterceptor', '@temporalio/interceptors-opentelemetry');
  return {
    sinks: traceSinks(tracing.workflowExport as { spanProcessor: SpanSink; resource: unknown }),
    activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
  };
}

/** Every activity errand's workflows schedule, built from the worker's dependencies. */
function errandActivities(dependencies: WorkerDependencies): object {
  const orchestration = createOrchestrationActivities(dependencies);
  return {
    ...createAgentLoopActivities(dependencies),
    ...orchestration,
    ...createRunActivities(dependencies),
    ...createWorkflowRunActivities({
      blobs: dependencies.blobs,
      conversations: dependencies.conversations,
      resolverFor: dependencies.resolverFor,
      orchestration,
      toolsets: dependencies.planning.availableToolsets,
      subagent: dependencies.subagentDefaults,
    }),
  };
}

/** Creates a worker that runs errand's workflows and activities on one task queue. */
export async function createErrandWorker(options: ErrandWorkerOptions): Promise<Worker> {
  const trace = await traceWorkerOptions(options.tracing ?? (await currentTracing()));
  const workflows = options.workflows ?? workflowSource();
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...workflows,
    activities: errandActivities(options.dependencies),
    // Activities pace their own heartbeats (src/activities/heartbeat.ts); after a cancel aborted a call here,
    // it heartbeats until the server confirms, which the SDK would otherwise hold back to 0.8 × the timeout.
    maxHeartbeatThrottleInterval: heartbeatThrottleMs,
    defaultHeartbeatThrottleInterval: heartbeatThrottleMs,
    // A workflow's cancel aborts its calls running here at once, without waiting for a heartbeat (decision 0022).
    sinks: { ...inFlightSinks(options.dependencies.heartbeats.inFlight), ...trace.sinks },
    // Bounded, so memory does not grow with the number of waiting subagents; evicted ones replay on wake.
    maxCachedWorkflows: defaultMaxCachedWorkflows,
    // errand's workflow tasks keep one thread busy in a burst; a second one uses the other core (decision 0016).
    workflowThreadPoolSize: defaultWorkflowThreads,
    // A workflow task sent to a worker that died waits this long on its sticky queue before another
    // worker gets it (the SDK default is 10 s); a live worker answers in milliseconds.
    stickyQueueScheduleToStartTimeout: '3s',
    // A retried activity (its first attempt died with a worker) moves its workflow off the dead worker's
    // sticky queue, so the workflow's next task does not wait the sticky timeout (decision 0014).
    // The trace interceptors run first, so the sticky reset and the activity itself are inside the activity's span.
    interceptors: {
      activity: [...trace.activity, resetStickyOnRetry],
      // A worker that bundles its sources at start adds the workflow trace interceptors as the prebuilt bundle has them.
      ...('workflowsPath' in workflows && workflows.workflowsPath !== undefined ? { workflowModules: [workflowTraceInterceptorModule] } : {}),
    },
    // Versioned: the server routes each workflow by its behaviour (subagents stay on the build that started
    // them, sessions and continuables move to the current one); unversioned, nothing changes.
    ...(options.deployment
      ? { workerDeploymentOptions: { useWorkerVersioning: true, version: { deploymentName: options.deployment.deploymentName, buildId: options.deployment.buildId }, defaultVersioningBehavior: defaultWorkerVersioningBehavior } }
      : {}),
    ...options.tuning,
  });
}

/** Runs a worker from configuration until SIGINT or SIGTERM. */
export async function runWorker(config: ErrandConfig = loadConfig()): Promise<void> {
  const tuning = workerTuningFromEnv(process.env);
  await checkWorkerEnvironment(config);
  await startTracing('worker');
  const connection = await NativeConnection.connect(config.temporal.connection);
  try {
    const attributes = await checkSearchAttributes(connection, config.temporal.namespace);
    if (attributes.kind === 'missing') throw new Error(attributes.message);
    if (attributes.kind === 'unknown') process.stderr.write(`errand worker: ${attributes.message}\n`);
    const dependencies = createWorkerDependencies(config);
    const worker = await createErrandWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      dependencies,
      ...(config.workerDeployment ? { deployment: config.workerDeployment } : {}),
      tuning,
    });
    process.stdout.write(`errand worker: polling task queue "${config.temporal.taskQueue}" on ${config.temporal.summary}\n`);
    const deployment = config.workerDeployment;
    process.stdout.write(`errand worker: ${deployment ? `worker deployment "${deployment.deploymentName}", build "${deployment.buildId}"` : 'unversioned (no worker deployment)'}\n`);
    process.stdout.write(`errand worker: ${processContainmentSummary(dependencies.commands)}\n`);
    try {
      await worker.run();
    } finally {
      await dependencies.toolsets.close();
    }
  } finally {
    await connection.close();
    await stopTracing();
  }
}

if (require.main === module) {
  let config: ErrandConfig;
  try {
    config = loadConfig();
  } catch (error) {
    process.stderr.write(`errand worker: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
  installLogging({ secrets: providerApiKeys(config.providers) });
  runWorker(config).catch((error: unknown) => {
    process.stderr.write(`errand worker: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
