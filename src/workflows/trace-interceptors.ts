/**
 * errand's workflow trace interceptors (decision 0033). Not a workflow: the bundle's `workflowInterceptorModules`
 * (src/temporal/workflow-bundle-options.ts) loads this module into every workflow run.
 *
 * They do what `@temporalio/interceptors-opentelemetry`'s workflow interceptors do — a span per workflow run
 * (the child of the span in the start's `_tracer-data` header), per signal, update, query, activity start,
 * child workflow start, signal sent and continue-as-new; the trace carried into every activity, child
 * workflow and continue-as-new in the same header; trace and span ids on workflow log lines — without the
 * OpenTelemetry SDK in the sandbox. The SDK's modules are evaluated once per workflow run that the worker
 * holds in its cache: ~2.5 MB each, 1.2 GB for a cache of 500.
 *
 * Replay: histories recorded with Temporal's interceptors must replay here, and the other way round (a
 * rollback). So every method keeps their shape: the same `await`s (each one a microtask, and the order of
 * microtasks decides the order of commands), the same SDK flag checks in the same places (a flag checked is
 * a flag recorded in the history), and the same draws from the workflow's seeded `Math.random` for span and
 * trace ids (16 per span id, 32 per trace id, as OpenTelemetry's id generator draws them). Change none of
 * that without a patch and a replay history on both sides. One thing differs: no `AsyncLocalStorage` (see
 * `current` in trace-spans.ts). The spans and their ids are in trace-spans.ts, headers and `instrument` in trace-instrument.ts.
 */
import {
  ContinueAsNew,
  inWorkflowContext,
  workflowInfo,
  type ActivityInput,
  type ContinueAsNewInput,
  type DisposeInput,
  type GetLogAttributesInput,
  type GetMetricTagsInput,
  type LocalActivityInput,
  type Next,
  type Payload,
  type QueryInput,
  type SignalInput,
  type SignalWorkflowInput,
  type StartChildWorkflowExecutionInput,
  type StartNexusOperationInput,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowInternalsInterceptor,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { SdkFlags } from '@temporalio/workflow/lib/flags';
import { getActivator } from '@temporalio/workflow/lib/global-attributes';
import { contextFromHeaders, headersWithContext, instrument, instrumentSync, nexusHeadersWithContext, type AcceptableErrors } from './trace-instrument';
import { activeContext, enterRun, leaveRun, unreplayedRandom, validContext } from './trace-spans';

export { traceHeader } from './trace-instrument';

const isContinueAsNew: AcceptableErrors = (error) => error instanceof ContinueAsNew;

function hasFlag(flag: (typeof SdkFlags)[keyof typeof SdkFlags]): boolean {
  return getActivator().hasFlag(flag);
}

class TraceInboundInterceptor implements WorkflowInboundCallsInterceptor {
  async execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const context = contextFromHeaders(input.headers);
    if (!hasFlag(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
    return await instrument({
      spanName: `RunWorkflow:${workflowInfo().workflowType}`,
      fn: (span) => {
        enterRun(span.context);
        return next(input);
      },
      context,
      acceptableErrors: isContinueAsNew,
      inbound: true,
    });
  }

  async handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceptorsTracesInboundSignals)) return next(input);
    const context = contextFromHeaders(input.headers);
    if (!hasFlag(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
    return await instrument({ spanName: `HandleSignal:${input.signalName}`, fn: () => next(input), context, inbound: true });
  }

  async handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>): Promise<unknown> {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods)) return next(input);
    const context = contextFromHeaders(input.headers);
    return await instrument({
      spanName: `HandleUpdate:${input.name}`,
      fn: (span) => {
        span.setAttribute('temporalUpdateId', input.updateId);
        return next(input);
      },
      context,
      inbound: true,
    });
  }

  validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>): void {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods)) return next(input);
    const context = contextFromHeaders(input.headers);
    instrumentSync({
      spanName: `ValidateUpdate:${input.name}`,
      fn: (span) => {
        span.setAttribute('temporalUpdateId', input.updateId);
        return next(input);
      },
      context,
    });
  }

  async handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>): Promise<unknown> {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods)) return next(input);
    const context = contextFromHeaders(input.headers);
    return await instrument({ spanName: `HandleQuery:${input.queryName}`, fn: () => next(input), context, inbound: true, random: unreplayedRandom });
  }
}

/**
 * An outbound call in a span, its input's headers carrying that span — not `async` on purpose: each caller
 * `return await`s it, which is the one `await` Temporal's methods have around `instrument` (decision 0033).
 */
function startWithTrace<I extends { headers: Record<string, Payload> }, R>(spanName: string, input: I, next: (input: I) => Promise<R>, acceptableErrors?: AcceptableErrors): Promise<R> {
  return instrument({
    spanName,
    fn: async () => {
      const headers = headersWithContext(input.headers);
      if (!hasFlag(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
      return next({ ...input, headers });
    },
    ...(acceptableErrors ? { acceptableErrors } : {}),
  });
}

class TraceOutboundInterceptor implements WorkflowOutboundCallsInterceptor {
  async scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>): Promise<unknown> {
    return await startWithTrace(`StartActivity:${input.activityType}`, input, next);
  }

  async scheduleLocalActivity(input: LocalActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>): Promise<unknown> {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceptorsTracesLocalActivities)) return next(input);
    return await startWithTrace(`StartActivity:${input.activityType}`, input, next);
  }

  async startNexusOperation(input: StartNexusOperationInput, next: Next<WorkflowOutboundCallsInterceptor, 'startNexusOperation'>): ReturnType<Next<WorkflowOutboundCallsInterceptor, 'startNexusOperation'>> {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods)) return next(input);
    return await instrument({
      spanName: `StartNexusOperation:${input.service}/${input.operation}`,
      fn: async (span) => {
        span.setAttribute('temporalNexusService', input.service);
        span.setAttribute('temporalNexusOperation', input.operation);
        span.setAttribute('temporalNexusEndpoint', input.endpoint);
        const headers = nexusHeadersWithContext(input.headers);
        return await next({ ...input, headers });
      },
    });
  }

  async startChildWorkflowExecution(input: StartChildWorkflowExecutionInput, next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>): ReturnType<Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>> {
    return await startWithTrace(`StartChildWorkflow:${input.workflowType}`, input, next);
  }

  async continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>): Promise<never> {
    return await startWithTrace(`ContinueAsNew:${input.options.workflowType ?? workflowInfo().workflowType}`, input, next, isContinueAsNew);
  }

  async signalWorkflow(input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>): Promise<void> {
    return await startWithTrace(`SignalWorkflow:${input.signalName}`, input, next);
  }

  getLogAttributes(input: GetLogAttributesInput, next: Next<WorkflowOutboundCallsInterceptor, 'getLogAttributes'>): Record<string, unknown> {
    const active = inWorkflowContext() ? activeContext() : undefined;
    if (!validContext(active)) return next(input);
    return next({ trace_id: active.traceId, span_id: active.spanId, trace_flags: `0${active.traceFlags.toString(16)}`, ...input });
  }

  getMetricTags(input: GetMetricTagsInput, next: Next<WorkflowOutboundCallsInterceptor, 'getMetricTags'>): GetMetricTagsInput {
    return next(input);
  }
}

class TraceInternalsInterceptor implements WorkflowInternalsInterceptor {
  // Temporal's is `async` and disables its context storage; nothing awaits it and it schedules nothing.
  dispose(input: DisposeInput, next: Next<WorkflowInternalsInterceptor, 'dispose'>): void {
    leaveRun();
    next(input);
  }
}

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new TraceInboundInterceptor()],
  outbound: [new TraceOutboundInterceptor()],
  internals: [new TraceInternalsInterceptor()],
});
