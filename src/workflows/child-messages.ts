import { patched } from '@temporalio/workflow';
import type { JsonObject } from '../contracts/json';
import { liveTextReadTimeoutMs } from '../contracts/limits/workflow';
import type { LiveText } from '../contracts/live-text';
import type { TaskRecord } from '../contracts/carried-agent-state';
import { beforeDelivery, findTask, isLive, markDelivering, undoDelivery } from '../domain/task-registry';
import type { Agent } from './agent';
import type { ToolOutcome } from './agent-loop';
import { attempt, errorText, toolError, toolText } from './tool-outcomes';

/**
 * The orchestration tools that talk to a task that is already running (SEMANTICS §2, §5): `send_message`
 * and `approve` deliver by update, so delivery is confirmed; `list_subagent_models` asks the worker;
 * `load(peek)` reads what a task is writing now.
 * Every failure is a tool error for the calling model.
 */

/** Where a tool call sits in the conversation (it makes ids that stay the same when a workflow task is replayed). */
export interface CallPosition {
  assistantSeq: number;
  index: number;
}

/** `send_message` to a continuable task: confirmed only once the child has accepted it (its update returned). */
export async function sendMessage(agent: Agent, args: JsonObject, position: CallPosition): Promise<ToolOutcome> {
  const taskId = typeof args.task_id === 'string' ? args.task_id : undefined;
  const message = typeof args.message === 'string' ? args.message : undefined;
  if (!taskId || !message || message.trim().length === 0) return toolError('send_message needs `task_id` and a non-empty `message`.');
  const task = findTask(agent.state, taskId);
  if (!task) {
    const known = agent.state.tasks.filter((candidate) => candidate.mode === 'continuable' && isLive(candidate)).map((candidate) => candidate.taskId);
    return toolError(`Message not delivered: ${taskId} is not one of your tasks.${known.length > 0 ? ` Your continuable tasks: ${known.join(', ')}.` : ''}`);
  }
  if (task.kind === 'workflow') {
    return toolError(`Message not delivered: ${taskId} is a workflow run, which takes no messages. load with source "${taskId}" waits for it (peek: true shows its agents, cancel: true stops it); pausing and resuming it is errand workflow pause/resume or POST /v1/workflows/${task.workflowId}/pause and /resume.`);
  }
  if (task.mode !== 'continuable') return toolError(`Message not delivered: ${taskId} is not continuable (delegate with continuable: true to keep talking to a subagent).`);
  if (!isLive(task)) return toolError(`Message not delivered: ${taskId} has ended (${task.state}).`);
  // Marked running before the delivery, so an answer that arrives before the update returns is not taken as stale.
  const before = beforeDelivery(task);
  agent.updateTask(taskId, markDelivering);
  let delivered;
  try {
    delivered = await agent.activities.orchestration.deliverToChild.executeWithOptions({ summary: `message to ${taskId}` }, [{
      workflowId: task.workflowId,
      kind: 'message',
      message,
      messageId: `${agent.conversationId}:${position.assistantSeq}:${position.index}`,
      from: `parent ${agent.options.workflowId}`,
    }]);
  } catch (error) {
    delivered = { accepted: false as const, reason: errorText(error) };
  }
  if (!delivered.accepted) {
    agent.updateTask(taskId, (current) => undoDelivery(current, before));
    return toolError(`Message not delivered to ${taskId}: ${delivered.reason}`);
  }
  agent.updateViews();
  return toolText(`Message delivered to ${taskId}. Its answer will arrive as a task notice.`);
}

/** `approve`: decide a tool call one of this workflow's tasks waits on (only where the operator lets the parent decide). */
export async function approve(agent: Agent, args: JsonObject, position: CallPosition): Promise<ToolOutcome> {
  if (agent.options.approvers !== 'human-or-parent') {
    return toolError('Approvals of your tasks are decided by a person (the operator set approvers to "human"); you cannot approve or deny them.');
  }
  const approvalId = typeof args.approval_id === 'string' ? args.approval_id : undefined;
  const decision = args.decision === 'approve' || args.decision === 'deny' ? args.decision : undefined;
  if (!approvalId || !decision) return toolError('approve needs `approval_id` and `decision` ("approve" or "deny").');
  const task = agent.state.tasks.find((candidate) => approvalId.startsWith(`${candidate.workflowId}:`));
  const pending = task?.peek?.pendingApprovals?.some((entry) => entry.id === approvalId);
  if (!task || !pending) return toolError(`No approval "${approvalId}" is pending in your tasks.`);
  let delivered;
  try {
    delivered = await agent.activities.orchestration.deliverToChild.executeWithOptions({ summary: `${decision} ${approvalId}` }, [{
      workflowId: task.workflowId,
      kind: 'approval',
      approvalId,
      decision,
      ...(typeof args.reason === 'string' ? { reason: args.reason } : {}),
      by: `parent ${agent.options.workflowId}`,
      updateId: `${agent.conversationId}:${position.assistantSeq}:${position.index}`,
    }]);
  } catch (error) {
    delivered = { accepted: false as const, reason: errorText(error) };
  }
  if (!delivered.accepted) return toolError(`The decision on ${approvalId} was not applied: ${delivered.reason}`);
  return toolText(`${decision === 'approve' ? 'Approved' : 'Denied'} ${approvalId} for ${task.taskId}.`);
}

/** `list_subagent_models`: the providers and models a delegation may use (asked of the worker's configuration). */
export function listModels(agent: Agent, args: JsonObject): Promise<ToolOutcome> {
  return attempt('list_subagent_models', () => agent.activities.orchestration.listSubagentModels.executeWithOptions({ summary: 'list subagent models' }, [{
    ...(typeof args.provider === 'string' ? { provider: args.provider } : {}),
    ...(typeof args.model === 'string' ? { model: args.model } : {}),
  }]));
}

/** Patch id of `load(peek)` reading a task's text-so-far (an activity that older histories do not have). */
const livePeekPatch = 'load-peek-live-text';

/**
 * The text a running task's model call has written so far, for `load(task_id, peek: true)`. A workflow
 * cannot read another workflow's pending activities, so an activity asks Temporal; peek must neither fail
 * nor wait because of it, so it gets one short attempt and any failure means no partial text. Patched:
 * workflows that peeked before this existed replay without the activity.
 */
export async function liveTextOf(agent: Agent, task: TaskRecord): Promise<LiveText | undefined> {
  if (!patched(livePeekPatch)) return undefined;
  try {
    const live = await agent.activities.orchestration.readLiveText.executeWithOptions(
      { summary: `read what ${task.taskId} is writing`, startToCloseTimeout: liveTextReadTimeoutMs, retry: { maximumAttempts: 1 } },
      [{ workflowId: task.workflowId }],
    );
    return live ?? undefined;
  } catch {
    return undefined;
  }
}
