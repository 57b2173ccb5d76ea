import type { DelegationStatus } from '../contracts/delegation-api';
import { mcpTaskPollIntervalMs } from '../contracts/limits/api';
import { quoteChildWords } from '../domain/child-words';
import type { DelegationService } from './delegation-service';
import type { DetailedMcpTask, McpTask, McpTaskBackend, TaskInputRequest } from './mcp-tasks-extension';
import { isApiProblem } from './problem';
import type { SessionService } from './session-service';

/**
 * MCP tasks (the Tasks extension) backed by errand's delegations: a task's id is its delegation's id (the
 * subagent workflow), so a task is as durable as the delegation, and any API process reads it. `tasks/get`
 * is a peek; a continuable waiting for its next message, or a delegation waiting for a person's decision on
 * a tool call, is `input_required`; `tasks/update` sends that message (through the MCP session that owns
 * the task, as `send_message`) or that decision; `tasks/cancel` cancels the delegation and everything
 * under it. Every call checks that the delegation is the caller's tenant's.
 */

/** Key of the input request for a continuable's next message (unique per task: one per finished turn count). */
const messageKeyPrefix = 'message-after-turn-';
/** Key of the input request for a decision on a pending approval. */
const approvalKeyPrefix = 'approval-';

/** What settles a delegation as "completed" for MCP (the tool call ran; a non-`completed` ending is an error result). */
const endedStates = new Set(['completed', 'truncated', 'max_turns', 'budget', 'declined', 'failed']);

/** The tasks of one tenant. */
export function delegationTasks(tenant: string, delegations: DelegationService, sessions: SessionService | undefined): McpTaskBackend {
  /** The delegation's status, or undefined when it is not this tenant's. */
  const statusOf = async (taskId: string): Promise<DelegationStatus | undefined> => {
    try {
      return await delegations.status(tenant, taskId);
    } catch (error) {
      if (isApiProblem(error) && error.status === 404) return undefined;
      throw error;
    }
  };

  return {
    async get(taskId) {
      const status = await statusOf(taskId);
      return status ? await detailed(status) : undefined;
    },
    async update(taskId, inputResponses) {
      const status = await statusOf(taskId);
      if (!status) return false;
      for (const [key, response] of Object.entries(inputResponses)) {
        const content = acceptedContent(response);
        if (!content) continue;
        if (key === `${messageKeyPrefix}${status.turns}` && status.state === 'waiting' && typeof content.message === 'string') {
          await sendMessage(status, content.message);
        } else if (key.startsWith(approvalKeyPrefix) && status.state === 'waiting_approval' && (content.decision === 'approve' || content.decision === 'deny')) {
          const reason = typeof content.reason === 'string' ? content.reason : undefined;
          await sessions?.decide(tenant, key.slice(approvalKeyPrefix.length), content.decision, reason);
        }
        // Any other key is not outstanding (answered, superseded or never issued): ignored, as SEP-2663 says.
      }
      return true;
    },
    async cancel(taskId) {
      if (!(await statusOf(taskId))) return false;
      await delegations.cancel(tenant, taskId, `cancelled by its MCP client (${tenant})`);
      return true;
    },
  };

  /** The message goes through the session that owns the task (its send_message), so the session hears the answer. */
  async function sendMessage(status: DelegationStatus, message: string): Promise<void> {
    const parent = status.parent;
    if (sessions && parent) {
      const session = await sessions.get(tenant, parent);
      const task = session.peek.tasks?.find((candidate) => candidate.workflowId === status.id);
      if (task) {
        await sessions.callTool(tenant, parent, { name: 'send_message', arguments: { task_id: task.taskId, message } });
        return;
      }
    }
    await delegations.sendMessage(tenant, status.id, message, undefined);
  }

  async function detailed(status: DelegationStatus): Promise<DetailedMcpTask> {
    const usage = status.peek?.totalUsage ?? status.peek?.usage;
    const cost = usage?.costUsd !== undefined ? `, $${usage.costUsd.toFixed(6)}` : '';
    const task: McpTask = {
      taskId: status.id,
      status: 'working',
      statusMessage: `${status.state}: ${status.turns} turn${status.turns === 1 ? '' : 's'}${cost}`,
      createdAt: status.startedAt,
      lastUpdatedAt: status.closedAt ?? new Date(status.peek?.lastActivityAt ?? Date.parse(status.startedAt)).toISOString(),
      // The delegation is kept as long as Temporal's retention keeps closed workflows: no TTL of its own.
      ttlMs: null,
      pollIntervalMs: mcpTaskPollIntervalMs,
    };
    if (status.state === 'cancelled') return { ...task, status: 'cancelled' };
    if (endedStates.has(status.state)) {
      const answer = await delegations.result(tenant, status.id, 0);
      if (!answer.done) return { ...task, status: 'working' };
      const { result } = answer;
      const words = result.output.length > 0 ? quoteChildWords(undefined, result.output) : '(no output)';
      const text = [`${status.id} ${result.status}.`, words, result.diagnostic ?? ''].filter((line) => line.length > 0).join('\n');
      return { ...task, status: 'completed', result: { resultType: 'complete', content: [{ type: 'text', text }], isError: result.status !== 'completed' } };
    }
    if (status.state === 'waiting') return { ...task, status: 'input_required', inputRequests: { [`${messageKeyPrefix}${status.turns}`]: messageRequest(status) } };
    if (status.state === 'waiting_approval' && sessions) {
      const approvals = (await sessions.listApprovals(tenant)).filter((approval) => approval.workflowId === status.id);
      if (approvals.length > 0) {
        const inputRequests = Object.fromEntries(approvals.map((approval) => [`${approvalKeyPrefix}${approval.id}`, approvalRequest(approval.tool, approval.argumentsPreview)]));
        return { ...task, status: 'input_required', inputRequests };
      }
    }
    return { ...task, status: 'working' };
  }
}

function messageRequest(status: DelegationStatus): TaskInputRequest {
  return {
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message: `${status.id} is continuable and waits for its next message (after ${status.turns} turns).`,
      requestedSchema: { type: 'object', properties: { message: { type: 'string', description: 'The next message to the subagent.' } }, required: ['message'] },
    },
  };
}

function approvalRequest(tool: string, argumentsPreview: string): TaskInputRequest {
  return {
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message: `The subagent asks to run ${tool} with ${argumentsPreview}; the operator's tool policy wants a decision.`,
      requestedSchema: {
        type: 'object',
        properties: { decision: { type: 'string', enum: ['approve', 'deny'] }, reason: { type: 'string', description: 'Why (optional).' } },
        required: ['decision'],
      },
    },
  };
}

/** The content of an accepted elicitation answer (`{action: "accept", content: {...}}`), or undefined. */
function acceptedContent(response: unknown): Record<string, unknown> | undefined {
  if (typeof response !== 'object' || response === null) return undefined;
  const { action, content } = response as { action?: unknown; content?: unknown };
  if (action !== 'accept' || typeof content !== 'object' || content === null) return undefined;
  return content as Record<string, unknown>;
}
