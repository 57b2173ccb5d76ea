import { CancellationScope, ParentClosePolicy, startChild, type ChildWorkflowHandle } from '@temporalio/workflow';
import type { PlanWorkflowRunOutput } from '../contracts/activities';
import type { TaskRecord } from '../contracts/carried-agent-state';
import type { JsonObject } from '../contracts/json';
import { staticSummaryMaxChars } from '../contracts/limits/api';
import { defaultMaxContinuables, workflowTaskTimeoutMs } from '../contracts/limits/workflow';
import { searchAttributes } from '../contracts/search-attributes';
import { workflowRunMemoKey, workflowRunWorkflowType, type WorkflowRunInput, type WorkflowRunResult } from '../contracts/workflow-run';
import { fitChildCaps, heldRefusal, leftForChildren } from '../domain/child-budgets';
import { formatForegroundResult } from '../domain/delegation-texts';
import { formatUsd } from '../domain/model-cost';
import { preview } from '../domain/subagent-prompt';
import { admissionError, findTask, isLive, markRead, markStarted, reserveCaps } from '../domain/task-registry';
import type { Agent } from './agent';
import type { ToolOutcome } from './agent-loop';
import { endingRefusal } from './ending-guard';
import { errorText, toolError, toolText } from './tool-outcomes';

/** What the orchestrator lends a run's start: its watch of the child, and whether the agent has begun to end. */
export interface RunTaskHooks {
  watch: (taskId: string, handle: RunHandle) => void;
  refusesStart: () => boolean;
}

/** A run's child handle, as the orchestrator watches it. */
export type RunHandle = ChildWorkflowHandle<(input: WorkflowRunInput) => Promise<WorkflowRunResult>>;

/**
 * `run_workflow` (SEMANTICS §7, decision 0045): a workflow run as one of this agent's tasks. It is checked
 * and counted like `delegate` (the background limit, what running tasks hold of the caps), planned by an
 * activity (the script, from a workflow source or inline; caps within what is left; the projection against
 * the money cap), and started as a child workflow `<parent>~task-<n>` of the caller's tenant, which the
 * orchestrator watches: a foreground call waits for its result, a background one is a task that `load`
 * waits for, peeks at and cancels, and whose end is a notice. Its caps are reserved from the caller's and
 * its spend joins the caller's total when it ends. The script runs in the run's sandbox, never here.
 */
export async function runWorkflowTask(agent: Agent, orchestrator: RunTaskHooks, args: JsonObject): Promise<ToolOutcome> {
  const { watch } = orchestrator;
  const options = agent.options;
  // A run's agents are delegations one level down: only an agent at the top may start one, so no depth is skipped.
  if (!agent.canDelegate || options.depth > 0) {
    return toolError(`run_workflow was not started: a workflow run's agents are delegations one level below the caller, so only a session or a top-level delegation (depth 0) may start one; this agent is at depth ${options.depth}.`);
  }
  const mode: TaskRecord['mode'] = args.async === true ? 'background' : 'foreground';
  const refused = admissionError(agent.state, mode, options.tasks, defaultMaxContinuables);
  if (refused) return toolError(`run_workflow was not started: ${refused}`);
  const held = agent.spendAddsUp ? heldRefusal(agent.remainingCaps(), agent.state.tasks) : undefined;
  if (held) return toolError(`run_workflow was not started: ${held}`);
  const named = typeof args.name === 'string' && args.name.length > 0 ? `workflow ${args.name}` : 'workflow (inline script)';
  const description = typeof args.description === 'string' && args.description.length > 0 ? args.description : named;
  const record = agent.addTask({ parentWorkflowId: options.workflowId, mode, description: preview(description, 80), kind: 'workflow' });
  const taskId = record.taskId;
  agent.updateViews();

  return agent.busy(async () => {
    const remaining = agent.spendAddsUp ? leftForChildren(agent.remainingCaps(), agent.state.tasks) : agent.remainingCaps();
    let plan: PlanWorkflowRunOutput;
    try {
      plan = await agent.activities.orchestration.planWorkflowRun.executeWithOptions({ summary: `plan ${record.taskId}: ${record.description}` }, [{
        request: args,
        workingDir: options.workingDir,
        ...(options.tenant ? { tenant: options.tenant } : {}),
        startedBy: options.workflowId,
        ...(remaining.tokens !== undefined ? { remainingBudget: remaining.tokens } : {}),
        ...(remaining.timeMs !== undefined ? { remainingTimeMs: remaining.timeMs } : {}),
        ...(remaining.costMicroUsd !== undefined ? { remainingCostMicroUsd: remaining.costMicroUsd } : {}),
      }]);
    } catch (error) {
      agent.removeTask(record.taskId);
      return toolError(`run_workflow was not started: planning failed: ${errorText(error)}`);
    }
    if (!plan.ok) {
      agent.removeTask(record.taskId);
      return toolError(`run_workflow was not started: ${plan.message}`);
    }
    if (orchestrator.refusesStart()) {
      agent.removeTask(record.taskId);
      return toolError(endingRefusal('run_workflow'));
    }
    let input = plan.input;
    if (agent.spendAddsUp) {
      // Other tasks may have started while this one was planned: its caps are fitted to what is left now and reserved.
      const fitted = fitChildCaps(input.caps, agent.remainingCaps(), agent.state.tasks);
      if (!fitted.ok) {
        agent.removeTask(record.taskId);
        return toolError(`run_workflow was not started: ${fitted.message}`);
      }
      input = { ...input, caps: fitted.caps };
      const reserved = fitted.reserved;
      if (reserved) agent.updateTask(taskId, (task) => reserveCaps(task, reserved));
    }
    let handle: RunHandle;
    try {
      handle = await CancellationScope.nonCancellable(() => startChild<(input: WorkflowRunInput) => Promise<WorkflowRunResult>>(workflowRunWorkflowType, runChildOptions(record, input, plan.inputKey, options.workflowId)));
    } catch (error) {
      agent.removeTask(record.taskId);
      return toolError(`run_workflow was not started: Temporal did not start ${record.workflowId}: ${errorText(error)}`);
    }
    agent.updateTask(taskId, (task) => markStarted(task, false));
    watch(taskId, handle);
    const projected = plan.projectionText ? `\nProjection: ${plan.projectionText}` : '';
    if (record.mode !== 'foreground') {
      return toolText(
        `Started ${record.taskId} in the background: workflow run ${record.workflowId} (${input.scriptName}). ` +
          `You will get a notice when it ends; load with source "${record.taskId}" waits for it, peek: true shows its agents and cost, cancel: true stops it and every agent.${projected}`,
      );
    }
    // The record is read afresh at each check: the registry's functions replace a record, never change it.
    let result: TaskRecord['result'];
    await agent.waitFor(() => {
      const task = findTask(agent.state, taskId);
      if (task && !isLive(task)) result = task.result;
      return !task || result !== undefined;
    });
    if (!result) return toolError('The workflow run left no result.');
    agent.updateTask(taskId, (task) => markRead(task, Date.now()));
    const formatted = formatForegroundResult(result, record.taskId);
    return { parts: [`Workflow run ${record.workflowId} (${input.scriptName}) ended ${result.status}: ${result.turns} agents, ${formatUsd(result.totalUsage?.costMicroUsd ?? 0)}.\n`, ...formatted.parts], isError: formatted.isError };
  });
}

/** The run's start: its id, the caller's tenant and the Web UI's summary, details and search attributes. */
function runChildOptions(record: TaskRecord, input: WorkflowRunInput, inputKey: string, parentId: string) {
  const caps = [
    ...(input.caps.tokenBudget !== undefined ? [`token budget ${input.caps.tokenBudget}`] : []),
    ...(input.caps.timeBudgetMs !== undefined ? [`time budget ${Math.floor(input.caps.timeBudgetMs / 1_000)} s`] : []),
    ...(input.caps.costBudgetMicroUsd !== undefined ? [`cost budget ${formatUsd(input.caps.costBudgetMicroUsd)}`] : []),
  ];
  return {
    workflowId: record.workflowId,
    args: [input] as [WorkflowRunInput],
    // Like a background delegation: it outlives the caller's continue-as-new; cancellation is explicit (cancelAll).
    parentClosePolicy: ParentClosePolicy.ABANDON,
    workflowTaskTimeout: workflowTaskTimeoutMs,
    // The input by content in errand's store: a resume of the ended run (API, CLI) reads it from there (decision 0039).
    memo: { [workflowRunMemoKey]: JSON.stringify({ inputKey }) },
    staticSummary: preview(`workflow · ${input.scriptName}`, staticSummaryMaxChars),
    staticDetails: [
      `**Workflow script:** \`${input.scriptName}\``,
      `**Limits:** ${[`${input.concurrency} agents at once`, `${input.maxAgents} agents in all`, ...caps].join(' · ')}`,
      `**Started by:** ${parentId} (run_workflow)`,
      `**Id:** ${record.workflowId}`,
    ].join('  \n'),
    typedSearchAttributes: [
      { key: searchAttributes.kind, value: 'workflow' },
      { key: searchAttributes.source, value: input.scriptName },
      { key: searchAttributes.parent, value: parentId },
      { key: searchAttributes.status, value: 'running' },
      { key: searchAttributes.model, value: 'none' },
      { key: searchAttributes.turns, value: 0 },
      { key: searchAttributes.costUsd, value: 0 },
      ...(input.tenant ? [{ key: searchAttributes.tenant, value: input.tenant }] : []),
    ],
  };
}
