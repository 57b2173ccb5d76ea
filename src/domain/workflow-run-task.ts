import { inlineTextLimit } from '../contracts/limits/workflow';
import type { SubagentResult } from '../contracts/subagent-result';
import type { WorkflowRunResult, WorkflowRunView } from '../contracts/workflow-run';
import { formatUsd, usageView } from './model-cost';
import { preview } from './subagent-prompt';

/*
 * A workflow run as one of a session's tasks (`run_workflow`, decision 0045): the session tracks it like a
 * delegation (load waits for it, peeks at it, cancels it; a background run's end is a notice), so its
 * result is read as a task's. Pure: the workflow and the probing activity use the same reading.
 */

/** Whether a child's result is a workflow run's (it names the journal it ended with). */
export function isWorkflowRunResult(value: unknown): value is WorkflowRunResult {
  return typeof value === 'object' && value !== null && typeof (value as { journalRef?: unknown }).journalRef === 'string' && typeof (value as { agents?: unknown }).agents === 'object';
}

/**
 * A run's result as a task's result. Its output is the script's result as JSON (the whole of it: the run
 * keeps a result too large for history in errand's store, and then the text says where to read it). A run
 * counts its tokens as one figure: the task's usage has them as input tokens, so the caller's token total
 * (input plus output) and cost are exact.
 */
export function runResultAsTaskResult(workflowId: string, run: WorkflowRunResult, durationMs: number): SubagentResult {
  const agents = `${run.agents.done} agent${run.agents.done === 1 ? '' : 's'} done, ${run.agents.failed} failed${run.agents.fromJournal > 0 ? `, ${run.agents.fromJournal} from the journal` : ''}`;
  const where = run.diagnostic ? `${run.diagnostic.message}${run.diagnostic.line !== null ? ` (line ${run.diagnostic.line})` : ''}` : undefined;
  const output = run.result !== undefined
    ? JSON.stringify(run.result, null, 2)
    : run.resultRef !== undefined
      ? `(the result is too large to show here: GET /v1/workflows/${workflowId} or errand workflow show ${workflowId} has it)`
      : '(the script returned nothing)';
  const usage = usageView({ inputTokens: run.tokens, outputTokens: 0, costMicroUsd: run.costMicroUsd });
  return {
    workflowId,
    status: run.status,
    output: run.status === 'completed' ? output : '',
    partialOutput: run.status === 'completed' ? '' : `workflow run ${workflowId}: ${agents}, ${run.tokens} tokens, ${formatUsd(run.costMicroUsd)}`,
    ...(run.status !== 'completed' ? { diagnostic: where ?? `the workflow run ended ${run.status}` } : {}),
    turns: run.agents.done + run.agents.failed,
    toolCalls: 0,
    usage,
    totalUsage: usage,
    durationMs,
  };
}

/** A run's view as `load(task_id, peek: true)` shows it: status, phase, agents per label, tokens, cost. */
export function formatRunPeek(view: WorkflowRunView): string {
  const lines = [
    `Workflow run ${view.id} (${view.scriptName}): ${view.status}${view.phase ? `, phase ${view.phase}` : ''}, ${Math.round(view.elapsedMs / 1_000)} s, ${view.tokens} tokens, ${formatUsd(view.costMicroUsd)}.`,
    ...view.labels.map((label) => `- ${label.label}: ${label.done} done, ${label.running} running, ${label.waiting} waiting, ${label.failed} failed`),
    ...(view.labels.length === 0 ? ['No agent has started yet.'] : []),
    ...(view.diagnostic ? [`Diagnostic: ${view.diagnostic.message}`] : []),
    ...(view.logs.length > 0 ? [`Last log: ${preview(view.logs.at(-1) ?? '', inlineTextLimit)}`] : []),
  ];
  return lines.join('\n');
}
