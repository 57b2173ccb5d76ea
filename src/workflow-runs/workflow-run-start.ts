/**
 * Starting a workflow run, and resuming an ended one (SEMANTICS §7), from outside a workflow: the API, the
 * CLI and a session's `run_workflow` tool call these. A resume is a new run that starts from the ended
 * run's journal (its result's `journalRef`) with the same or an edited script: every agent whose key is in
 * the journal and finished is not run again; failed ones run again.
 */
import type { Client, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { staticSummaryMaxChars } from '../contracts/limits/api';
import { workflowTaskTimeoutMs } from '../contracts/limits/workflow';
import { searchAttributes } from '../contracts/search-attributes';
import { workflowRunWorkflowType, type WorkflowRunInput, type WorkflowRunResult } from '../contracts/workflow-run';
import { formatUsd } from '../domain/model-cost';

/** The operator's limits of a run (`ErrandConfig.workflows`). */
export interface WorkflowRunLimits {
  maxConcurrentAgents: number;
  maxAgents: number;
}

/**
 * A run's input with its concurrency and agent count checked against the operator's limits: 0 or absent
 * means the operator's value; more than it is an error naming the field and the limit.
 */
export function withRunLimits<T extends Partial<Pick<WorkflowRunInput, 'concurrency' | 'maxAgents'>>>(input: T, limits: WorkflowRunLimits): T & Pick<WorkflowRunInput, 'concurrency' | 'maxAgents'> {
  const concurrency = input.concurrency || limits.maxConcurrentAgents;
  const maxAgents = input.maxAgents || limits.maxAgents;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > limits.maxConcurrentAgents) {
    throw new RangeError(`concurrency must be a whole number from 1 to ${limits.maxConcurrentAgents} (ERRAND_WORKFLOW_MAX_CONCURRENT_AGENTS); got ${String(input.concurrency)}`);
  }
  if (!Number.isInteger(maxAgents) || maxAgents < 1 || maxAgents > limits.maxAgents) {
    throw new RangeError(`maxAgents must be a whole number from 1 to ${limits.maxAgents} (ERRAND_WORKFLOW_MAX_AGENTS); got ${String(input.maxAgents)}`);
  }
  return { ...input, concurrency, maxAgents };
}

/** What the Temporal Web UI shows of a run: a one-line summary, details and the errand search attributes. */
export function workflowRunStartOptions(input: WorkflowRunInput, workflowId: string): {
  workflowTaskTimeout: number;
  staticSummary: string;
  staticDetails: string;
  typedSearchAttributes: SearchAttributePair[];
} {
  const caps = [
    ...(input.caps.tokenBudget !== undefined ? [`token budget ${input.caps.tokenBudget}`] : []),
    ...(input.caps.timeBudgetMs !== undefined ? [`time budget ${Math.floor(input.caps.timeBudgetMs / 1_000)} s`] : []),
    ...(input.caps.costBudgetMicroUsd !== undefined ? [`cost budget ${formatUsd(input.caps.costBudgetMicroUsd)}`] : []),
  ];
  const summary = `workflow · ${input.scriptName}${input.journalRef ? ' (resumed)' : ''}`;
  return {
    workflowTaskTimeout: workflowTaskTimeoutMs,
    staticSummary: summary.length > staticSummaryMaxChars ? `${summary.slice(0, staticSummaryMaxChars - 1)}…` : summary,
    staticDetails: [
      `**Workflow script:** \`${input.scriptName}\``,
      `**Limits:** ${[`${input.concurrency} agents at once`, `${input.maxAgents} agents in all`, ...caps].join(' · ')}`,
      `**Working directory:** \`${input.workingDir}\``,
      `**Started by:** ${input.startedBy}`,
      ...(input.journalRef ? [`**Journal:** resumed from \`${input.journalRef}\``] : []),
      `**Id:** ${workflowId}`,
    ].join('  \n'),
    typedSearchAttributes: [
      { key: searchAttributes.kind, value: 'workflow' },
      { key: searchAttributes.source, value: input.scriptName },
      { key: searchAttributes.status, value: 'running' },
      { key: searchAttributes.model, value: 'none' },
      { key: searchAttributes.turns, value: 0 },
      { key: searchAttributes.costUsd, value: 0 },
      ...(input.tenant ? [{ key: searchAttributes.tenant, value: input.tenant }] : []),
    ],
  };
}

/** Where a run starts. */
export interface WorkflowRunStart {
  workflowId: string;
  taskQueue: string;
  input: WorkflowRunInput;
}

/** Starts a workflow run. */
export function startWorkflowRun(client: Client, start: WorkflowRunStart): Promise<WorkflowHandleWithFirstExecutionRunId<(input: WorkflowRunInput) => Promise<WorkflowRunResult>>> {
  return client.workflow.start<(input: WorkflowRunInput) => Promise<WorkflowRunResult>>(workflowRunWorkflowType, {
    taskQueue: start.taskQueue,
    workflowId: start.workflowId,
    args: [start.input],
    ...workflowRunStartOptions(start.input, start.workflowId),
  });
}

/**
 * Resumes an ended run: a new run (`start.workflowId`) from the journal of the run `fromWorkflowId` ended
 * with, and `start.input`'s script (the same or an edited one). Throws when that run has not ended or
 * left no journal (a run that was terminated).
 */
export async function resumeWorkflowRun(client: Client, fromWorkflowId: string, start: WorkflowRunStart): Promise<WorkflowHandleWithFirstExecutionRunId<(input: WorkflowRunInput) => Promise<WorkflowRunResult>>> {
  const previous = client.workflow.getHandle(fromWorkflowId);
  const description = await previous.describe();
  if (description.status.name === 'RUNNING') throw new Error(`workflow run ${fromWorkflowId} is still running: cancel it (or wait for it to end) before resuming it`);
  const result = (await previous.result()) as WorkflowRunResult;
  const { carried: _carried, ...input } = start.input;
  return startWorkflowRun(client, { ...start, input: { ...input, journalRef: result.journalRef } });
}
