import { mcpTaskPollIntervalMs, peekQueryTimeoutMs } from '../contracts/limits/api';
import { workflowRunMessageNames, type WorkflowRunView } from '../contracts/workflow-run';
import { formatUsd } from '../domain/model-cost';
import type { DetailedMcpTask, McpTask, McpTaskBackend } from './mcp-tasks-extension';
import { isApiProblem } from './problem';
import type { OwnedRun, WorkflowRunService } from './workflow-run-service';

/**
 * MCP tasks (the Tasks extension) backed by workflow runs (`run_workflow` with `async`, decision 0045): a
 * task's id is the run's id, so any API process reads it. `tasks/get` reads the run's view (agents done,
 * running, waiting, failed; tokens; cost) and, once it has ended, its result; `tasks/cancel` sends the run's
 * cancel signal (every running agent is cancelled); a run asks for no input, so `tasks/update` has nothing
 * to apply. Every call checks that the run is the caller's tenant's.
 */

/** JSON-RPC "internal error": the task's run ended without a result of its own. */
const internalError = -32603;

/** The tasks of one tenant that are workflow runs. */
export function workflowRunTasks(tenant: string, runs: WorkflowRunService): McpTaskBackend {
  const owned = async (taskId: string): Promise<OwnedRun | undefined> => {
    try {
      return await runs.describeOwned(tenant, taskId);
    } catch (error) {
      if (isApiProblem(error) && error.status === 404) return undefined;
      throw error;
    }
  };
  return {
    async get(taskId) {
      const run = await owned(taskId);
      return run ? await detailed(run) : undefined;
    },
    async update(taskId) {
      return (await owned(taskId)) !== undefined;
    },
    async cancel(taskId) {
      if (!(await owned(taskId))) return false;
      await runs.signal(tenant, taskId, workflowRunMessageNames.cancelSignal, { reason: `cancelled by its MCP client (${tenant})` });
      return true;
    },
  };

  async function detailed(run: OwnedRun): Promise<DetailedMcpTask> {
    const { description } = run;
    const { view } = await runs.view(description.workflowId);
    const task: McpTask = {
      taskId: description.workflowId,
      status: 'working',
      statusMessage: view ? runStatusMessage(view) : `workflow run ${description.statusName.toLowerCase()}`,
      createdAt: (description.startTime ?? new Date()).toISOString(),
      lastUpdatedAt: (description.closeTime ?? new Date()).toISOString(),
      // The run is kept as long as Temporal's retention keeps closed workflows: no TTL of its own.
      ttlMs: null,
      pollIntervalMs: mcpTaskPollIntervalMs,
    };
    if (description.statusName === 'RUNNING') return { ...task, status: 'working' };
    // The run has closed: its result is there at once (the wait only bounds a slow answer).
    const result = await runs.result(description, peekQueryTimeoutMs);
    if (!result) {
      // Terminated or timed out: Temporal ended it, the run left no result.
      if (description.statusName === 'CANCELED' || description.statusName === 'CANCELLED') return { ...task, status: 'cancelled' };
      return { ...task, status: 'failed', error: { code: internalError, message: `workflow run ${description.workflowId} closed as ${description.statusName.toLowerCase()} without a result` } };
    }
    if (result.status === 'cancelled') return { ...task, status: 'cancelled' };
    const text = [
      `workflow run ${description.workflowId} ${result.status}: ${result.agents.done} agents done, ${result.agents.failed} failed, ${result.tokens} tokens, ${formatUsd(result.costMicroUsd)}.`,
      ...(result.result !== undefined ? [JSON.stringify(result.result, null, 2)] : []),
      ...(result.diagnostic ? [`${result.diagnostic.message}${result.diagnostic.line !== null ? ` (line ${result.diagnostic.line})` : ''}`] : []),
    ].join('\n');
    return { ...task, status: 'completed', result: { resultType: 'complete', content: [{ type: 'text', text }], isError: result.status !== 'completed' } };
  }
}

/** A run's status in one line: its status, agents per state, tokens and cost. */
export function runStatusMessage(view: WorkflowRunView): string {
  const sum = (key: 'done' | 'running' | 'waiting' | 'failed') => view.labels.reduce((total, label) => total + label[key], 0);
  return `${view.status}${view.phase ? ` (${view.phase})` : ''}: ${sum('done')} agents done, ${sum('running')} running, ${sum('waiting')} waiting, ${sum('failed')} failed; ${view.tokens} tokens, ${formatUsd(view.costMicroUsd)}`;
}

/** Tasks of either backend: a task id names a delegation or a workflow run, never both (their workflows' kinds differ). */
export function eitherTasks(first: McpTaskBackend, second: McpTaskBackend): McpTaskBackend {
  return {
    async get(taskId) {
      return (await first.get(taskId)) ?? (await second.get(taskId));
    },
    async update(taskId, inputResponses) {
      return (await first.update(taskId, inputResponses)) || (await second.update(taskId, inputResponses));
    },
    async cancel(taskId) {
      return (await first.cancel(taskId)) || (await second.cancel(taskId));
    },
  };
}
