import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { Payload, SearchAttributePair } from '@temporalio/common';
import { formatUsd } from '../domain/model-cost';
import { staticSummaryMaxChars, summaryInstructionWords } from '../contracts/limits/api';
import { workflowTaskTimeoutMs } from '../contracts/limits/workflow';
import type { ModelRoute } from '../contracts/model';
import { searchAttributes } from '../contracts/search-attributes';
import { versioningMemo } from '../contracts/versioning';
import type { SessionInput } from '../contracts/session';
import type { SourceSummary, SubagentInput } from '../contracts/subagent';
import { activeTraceHeaders } from './trace-context';

/**
 * What the Temporal Web UI shows for a workflow errand starts from outside a workflow (the API or the
 * CLI): a one-line static summary, Markdown static details and the errand search attributes
 * (DESIGN.md convention 10). Children started by a workflow get theirs in `workflows/task-orchestration.ts`; this is the
 * top-level counterpart, so both kinds of start look alike in the UI and in visibility queries.
 */

/** Who starts the workflow, as the Web UI should show it. */
export interface TopLevelStartIds {
  /** The workflow id the caller chose (`errand-<short id>`); shown in the details. */
  workflowId: string;
  /** Tenant of the API key that starts it; falls back to `input.tenant`. */
  tenant?: string;
  /** Who started it, e.g. `api` or `cli`; shown in the details when given. */
  startedBy?: string;
  /** The resolved source, when the caller holds it apart from the input; default `input.source`. */
  source?: SourceSummary;
}

/**
 * The parts of `WorkflowStartOptions` that make a start visible in the Web UI. Spread them into
 * `client.workflow.start(...)` next to `taskQueue`, `workflowId` and `args`.
 */
export interface TopLevelStartOptions {
  /** errand's workflow task timeout (`workflowTaskTimeoutMs`): how soon a lost worker's task goes elsewhere. */
  workflowTaskTimeout: number;
  staticSummary: string;
  staticDetails: string;
  typedSearchAttributes: SearchAttributePair[];
  /** A continuable's memo: it moves up to the current worker build (contracts/versioning.ts, decision 0030). */
  memo?: Record<string, string>;
}

/**
 * The Temporal header under which `@temporalio/interceptors-opentelemetry` carries trace context from a
 * starter into a workflow, and from a workflow into its activities, children and next run (its
 * `TRACE_HEADER`; test/observability/trace-header.test.ts checks the two agree). The value is the W3C text
 * map (`traceparent`, `tracestate`) as a JSON payload.
 */
export const traceHeaderKey = '_tracer-data';

/**
 * The workflow start's header fields that carry the active trace into the workflow, in the interceptors'
 * format: empty when no span is active or tracing is off. Both ways the API starts a workflow send them
 * (the SDK client through {@link traceHeaderInterceptor}, Temporal's HTTP API in its request's `header`), so
 * the workflow's spans are children of the request's span either way.
 */
export function traceHeader(): Record<string, Payload> {
  const carrier = activeTraceHeaders();
  if (carrier.traceparent === undefined) return {};
  // The payload the SDK's default converter writes (json/plain), built here: this module is loaded by the
  // API's Lambda bundle, which leaves the SDK's converters and protobuf definitions out (decision 0026).
  const utf8 = (text: string) => new TextEncoder().encode(text);
  return { [traceHeaderKey]: { metadata: { encoding: utf8('json/plain') }, data: utf8(JSON.stringify(carrier)) } };
}

/**
 * The SDK client's half of {@link traceHeader}: adds the active trace to every start, signal and update the
 * client sends (a header the caller set wins). Installed on every client errand makes (API, CLI, worker).
 */
export const traceHeaderInterceptor: WorkflowClientInterceptor = {
  start: (input, next) => next({ ...input, headers: { ...traceHeader(), ...input.headers } }),
  startWithDetails: (input, next) => next({ ...input, headers: { ...traceHeader(), ...input.headers } }),
  signalWithStart: (input, next) => next({ ...input, headers: { ...traceHeader(), ...input.headers } }),
  startUpdateWithStart: (input, next) => next({ ...input, workflowStartHeaders: { ...traceHeader(), ...input.workflowStartHeaders }, updateHeaders: { ...traceHeader(), ...input.updateHeaders } }),
  signal: (input, next) => next({ ...input, headers: { ...traceHeader(), ...input.headers } }),
  startUpdate: (input, next) => next({ ...input, headers: { ...traceHeader(), ...input.headers } }),
};

/** Start options of a top-level subagent workflow (a delegation started by the API or the CLI). */
export function subagentStartOptions(input: SubagentInput, ids: TopLevelStartIds): TopLevelStartOptions {
  const tenant = ids.tenant ?? input.tenant;
  const source = ids.source ?? input.source;
  const prefix = source ? `${source.kind} ${source.name}` : input.label;
  const details = [
    `**Task:** ${input.label}`,
    sourceLine(source),
    modelLine(input.route),
    `**Limits:** ${[
      `max turns ${input.maxTurns}`,
      `depth ${input.depth} of ${input.maxDepth}`,
      ...(input.tokenBudget !== undefined ? [`token budget ${input.tokenBudget}`] : []),
      ...capLines(input),
      ...(input.tasks ? [`${input.tasks.maxBackgroundTasks} background tasks`] : []),
      ...(input.idleTimeoutMs !== undefined ? [`idle timeout ${Math.round(input.idleTimeoutMs / 1000)} s`] : []),
    ].join(' · ')}`,
    toolsetsLine(input.toolsets),
    `**Working directory:** \`${input.workingDir}\``,
    ...(input.continuable ? ['**Continuable:** yes (takes messages after answering)'] : []),
    ...(input.parent ? [`**Parent:** ${input.parent.workflowId} (${input.parent.taskId})`] : []),
    ...commonLines(ids, tenant),
  ];
  return {
    workflowTaskTimeout: workflowTaskTimeoutMs,
    staticSummary: summaryLine(prefix, input.prompt || input.system.instructions || ''),
    staticDetails: details.join('  \n'),
    typedSearchAttributes: [
      { key: searchAttributes.kind, value: 'subagent' },
      { key: searchAttributes.source, value: source?.name ?? 'ad-hoc' },
      { key: searchAttributes.status, value: 'running' },
      { key: searchAttributes.model, value: modelName(input.route) },
      { key: searchAttributes.turns, value: 0 },
      ...(input.parent ? [{ key: searchAttributes.parent, value: input.parent.workflowId }] : []),
      ...(tenant ? [{ key: searchAttributes.tenant, value: tenant }] : []),
    ],
    ...(input.continuable === true ? { memo: versioningMemo(input) } : {}),
  };
}

/** The time and cost caps of a run, for its details. */
function capLines(input: { timeBudgetMs?: number; costBudgetMicroUsd?: number }): string[] {
  return [
    ...(input.timeBudgetMs !== undefined ? [`time budget ${Math.floor(input.timeBudgetMs / 1_000)} s`] : []),
    ...(input.costBudgetMicroUsd !== undefined ? [`cost budget ${formatUsd(input.costBudgetMicroUsd)}`] : []),
  ];
}

/** The `ErrandSource` of an MCP session (no recipe or agent: its MCP client calls its tools). */
export const mcpSessionSource = 'mcp';

/** Start options of a session workflow (started by the API or `errand session`). */
export function sessionStartOptions(input: SessionInput, ids: TopLevelStartIds): TopLevelStartOptions {
  const tenant = ids.tenant ?? input.tenant;
  const snapshot = input.recipe?.snapshot;
  const source: SourceSummary | undefined = snapshot
    ? { kind: snapshot.kind, name: snapshot.name, store: snapshot.store.id, version: snapshot.version, path: snapshot.path }
    : undefined;
  const prefix = source ? `session · ${source.kind} ${source.name}` : `session · ${input.label}`;
  const details = [
    `**Session:** ${input.label}`,
    sourceLine(source),
    input.route ? modelLine(input.route) : '**Model:** none (an MCP session: its client\'s model calls the tools)',
    `**Limits:** ${[
      `${input.maxTurnsPerMessage} turns per message`,
      `delegation depth ${input.maxDepth}`,
      `${input.tasks.maxBackgroundTasks} background tasks`,
      ...(input.tokenBudget !== undefined ? [`token budget ${input.tokenBudget}`] : []),
      ...capLines(input),
    ].join(' · ')}`,
    toolsetsLine(input.toolsets),
    `**Working directory:** \`${input.workingDir}\``,
    ...commonLines(ids, tenant),
  ];
  return {
    workflowTaskTimeout: workflowTaskTimeoutMs,
    staticSummary: summaryLine(prefix, input.initialMessage ?? input.system.instructions ?? ''),
    staticDetails: details.join('  \n'),
    typedSearchAttributes: [
      { key: searchAttributes.kind, value: 'session' },
      // An MCP session's source is `mcp`: the API counts a tenant's running ones by it (ERRAND_API_MAX_MCP_SESSIONS).
      { key: searchAttributes.source, value: input.mcp ? mcpSessionSource : source?.name ?? 'ad-hoc' },
      // A session waits for its first message unless it was given one; the workflow updates this each turn.
      { key: searchAttributes.status, value: input.initialMessage ? 'running' : 'waiting' },
      { key: searchAttributes.model, value: input.route ? modelName(input.route) : 'none' },
      { key: searchAttributes.turns, value: 0 },
      ...(tenant ? [{ key: searchAttributes.tenant, value: tenant }] : []),
    ],
  };
}

function modelName(route: ModelRoute): string {
  return `${route.provider}/${route.model}`;
}

function sourceLine(source: SourceSummary | undefined): string {
  if (!source) return '**Source:** ad hoc (instructions only)';
  return `**Source:** ${source.kind} \`${source.name}\` from ${source.store} (version \`${source.version}\`${source.path ? `, ${source.path}` : ''})`;
}

function modelLine(route: ModelRoute): string {
  return `**Model:** \`${modelName(route)}\`${route.reasoningEffort === undefined ? '' : ` · reasoning effort ${route.reasoningEffort}`}${route.temperature === undefined ? '' : ` · temperature ${route.temperature}`}`;
}

function toolsetsLine(toolsets: string[]): string {
  return `**Toolsets:** ${toolsets.length > 0 ? toolsets.join(', ') : '(none)'}`;
}

function commonLines(ids: TopLevelStartIds, tenant: string | undefined): string[] {
  return [
    `**Workflow:** ${ids.workflowId}`,
    ...(tenant ? [`**Tenant:** ${tenant}`] : []),
    ...(ids.startedBy ? [`**Started by:** ${ids.startedBy}`] : []),
  ];
}

/** `<prefix> — <first words of text>` on one line, cut to what the Web UI shows in a list row. */
function summaryLine(prefix: string, text: string): string {
  const words = text.trim().split(/\s+/).filter((word) => word !== '');
  const head = words.slice(0, summaryInstructionWords).join(' ');
  const firstWords = words.length > summaryInstructionWords ? `${head} …` : head;
  // A label made from the task's own first words is not repeated.
  const line = (firstWords === '' || firstWords === prefix ? prefix : `${prefix} — ${firstWords}`).replace(/\s+/g, ' ');
  return line.length <= staticSummaryMaxChars ? line : `${line.slice(0, staticSummaryMaxChars - 1)}…`;
}
