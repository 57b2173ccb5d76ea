import { NativeConnection, Worker, type ActivityInterceptorsFactory, type InjectedSinks, type WorkerOptions } from '@temporalio/worker';
import { createOrchestrationActivities } from '../activities/orchestration-activities';
import { resetStickyOnRetry } from '../activities/sticky-reset';
import { createAgentLoopActivities } from '../activities/agent-loop-activities';
import { createRunActivities } from '../activities/run-activities';
import { createWorkflowRunActivities } from '../activities/workflow-run-activities';
import { commonJsExports } from '../sources/common-js-exports';
import { inFlightSinks } from '../activities/in-flight-calls';
import { loadConfig, type ErrandConfig } from '../settings/config';
import { defaultMaxCachedWorkflows, defaultWorkerVersioningBehavior, defaultWorkflowThreads, heartbeatThrottleMs } from '../contracts/limits/workflow';
import { workerTuningFromEnv } from '../settings/worker-tuning';
import type { WorkerDeploymentSettings } from '../settings/worker-deployment';
import { currentTracing, startTracing, stopTracing, type Tracing } from '../observability/tracing';
import { traceSinks, type SpanSink } from '../observability/workflow-spans';
import type { TraceSinks } from '../contracts/trace-sinks';
import { workflowTraceInterceptorModule } from '../temporal/workflow-bundle-options';
import { processContainmentSummary } from '../tools/process-containment';
import { checkSearchAttributes } from '../temporal/search-attribute-check';
import { createWorkerDependencies, checkWorkerEnvironment, type WorkerDependencies } from './worker-dependencies';
import { workflowSource } from './workflow-source';

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
