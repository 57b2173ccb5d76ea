import { McpError, ErrorCode, RELATED_TASK_META_KEY, type CallToolResult, type Result, type Task } from '@modelcontextprotocol/sdk/types.js';
import { isTerminal, type TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { JsonObject } from '../contracts/json';
import { mcpBackgroundTools, startedTaskIdOf } from '../domain/mcp-session-tools';
import { legacyTaskCancelWaitMs, legacyTaskStartWaitMs, mcpTaskPollIntervalMs } from '../contracts/limits/api';
import type { DetailedMcpTask, McpTaskBackend } from './mcp-tasks-extension';

/**
 * MCP tasks at protocol revision 2025-11-25 (its experimental Tasks: a `tools/call` with `task` answers with
 * a task, then `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`), for clients that use them. The
 * first SDK generation serves the methods over a {@link TaskStore}; errand's store keeps nothing itself: a
 * task is the delegation (or workflow run) a background `delegate` (or `run_workflow`) started in the MCP
 * session, its id the delegation's, so it is as durable as the delegation and any API process answers for it
 * (the same tasks the 2026-07-28 extension serves, mcp-delegation-tasks.ts).
 *
 * 2025-11-25 has no way to send a task a message: a continuable that answered and waits for its next message
 * is `completed` here, its result the answer so far (as `load` gives it), and the conversation goes on with
 * `send_message` as before. A delegation waiting for a person's decision on a tool call is `working` (the
 * decision is made with `errand approvals` or the API).
 */

/** The server's `tasks` capability: list, cancel, and tool calls as tasks. */
export const legacyTaskCapability = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** What the 2025-11-25 tasks need of errand, for one MCP session of one tenant. */
export interface LegacySessionTasks {
  /** The tenant's tasks by delegation (or run) id (mcp-delegation-tasks.ts, mcp-workflow-run-tasks.ts). */
  backend: McpTaskBackend;
  /** The session's own tasks: errand's task id (`task-3`) and the delegation's (or run's) id, once it has one. */
  sessionTasks(): Promise<Array<{ taskId: string; workflowId: string }>>;
  /** The session's `load` of one of its tasks (errand's task id): the text a 2025-11-25 client reads today. */
  load(errandTaskId: string): Promise<CallToolResult>;
  /** How long a `tasks/result` waits for its task to end, ms (the HTTP route's longest wait); unbounded when absent (stdio). */
  resultWaitMs?: number | undefined;
}

/** Whether a 2026-style task that waits for input is a continuable waiting for its next message (not an approval). */
function waitsForMessage(task: DetailedMcpTask): boolean {
  return task.status === 'input_required' && Object.keys(task.inputRequests).some((key) => key.startsWith('message-after-turn-'));
}

/** A task as 2025-11-25 shows it. */
export function legacyTask(task: DetailedMcpTask): Task {
  const continuable = waitsForMessage(task);
  const note = continuable ? 'continuable: send it more with send_message' : task.status === 'input_required' ? "waits for a person's decision on a tool call (errand approvals, or the API's /v1/approvals)" : undefined;
  const statusMessage = note === undefined ? task.statusMessage : task.statusMessage ? `${task.statusMessage}; ${note}` : note;
  return {
    taskId: task.taskId,
    status: task.status === 'input_required' ? (continuable ? 'completed' : 'working') : task.status,
    ttl: task.ttlMs,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ...(task.pollIntervalMs !== undefined ? { pollInterval: task.pollIntervalMs } : {}),
    ...(statusMessage !== undefined ? { statusMessage } : {}),
  };
}

/** The result of an ended task (the session's `load` for a completed one or a continuable that answered). */
async function endedResult(tasks: LegacySessionTasks, task: DetailedMcpTask, errandTaskId: string): Promise<Result> {
  if (task.status === 'completed' || waitsForMessage(task)) return tasks.load(errandTaskId);
  if (task.status === 'failed') return { content: [{ type: 'text', text: task.error.message }], isError: true };
  if (task.status === 'cancelled') return { content: [{ type: 'text', text: `${task.taskId} was cancelled${task.statusMessage ? ` (${task.statusMessage})` : ''}.` }], isError: true };
  throw new McpError(ErrorCode.InvalidRequest, `${task.taskId} has not ended (${legacyTask(task).status}): ask tasks/get until it has`);
}

/** errand's task id of a delegation (or run) of this session, or undefined. */
async function errandTaskOf(tasks: LegacySessionTasks, taskId: string): Promise<string | undefined> {
  return (await tasks.sessionTasks()).find((task) => task.workflowId === taskId)?.taskId;
}

function notFound(taskId: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId} is not a task of this MCP session`);
}

function unused(what: string): never {
  throw new McpError(ErrorCode.InvalidRequest, `${what}: errand's tasks are started by a tools/call of ${mcpBackgroundTools.join(' or ')} with "task" and end on their own`);
}

/**
 * The session's tasks as the SDK's task store. Only the session's own tasks are found (the SDK's rule for a
 * store shared by sessions); creating and settling tasks is errand's, not the SDK's.
 */
export function legacyTaskStore(tasks: LegacySessionTasks): TaskStore {
  const owned = async (taskId: string): Promise<DetailedMcpTask | undefined> => ((await errandTaskOf(tasks, taskId)) === undefined ? undefined : tasks.backend.get(taskId));
  return {
    createTask: async () => unused('tasks are not created through the task store'),
    storeTaskResult: async () => unused('a task result is not stored by the client'),
    async getTask(taskId) {
      const task = await owned(taskId);
      return task ? legacyTask(task) : null;
    },
    async getTaskResult(taskId): Promise<Result> {
      const errandTaskId = await errandTaskOf(tasks, taskId);
      const task = errandTaskId === undefined ? undefined : await tasks.backend.get(taskId);
      if (errandTaskId === undefined || !task) throw notFound(taskId);
      return endedResult(tasks, task, errandTaskId);
    },
    async updateTaskStatus(taskId, status) {
      if (status !== 'cancelled') unused(`a task's status is not set to ${status} by the client`);
      if ((await errandTaskOf(tasks, taskId)) === undefined || !(await tasks.backend.cancel(taskId))) throw notFound(taskId);
      // The answer to tasks/cancel is the task as it is next: wait (a while) for the delegation to end cancelled.
      const deadline = Date.now() + legacyTaskCancelWaitMs;
      while (Date.now() < deadline) {
        const task = await tasks.backend.get(taskId).catch(() => undefined);
        if (!task || isTerminal(task.status)) return;
        await new Promise((resolveWait) => setTimeout(resolveWait, 200));
      }
    },
    async listTasks() {
      const listed: Task[] = [];
      for (const { workflowId } of await tasks.sessionTasks()) {
        const task = await tasks.backend.get(workflowId).catch(() => undefined);
        if (task) listed.push(legacyTask(task));
      }
      return { tasks: listed };
    },
  };
}

/**
 * `tasks/result` (in place of the SDK's, which waits without end): the task's result once it has ended,
 * with the related-task marker; it waits for the end at most `resultWaitMs` (a request over HTTP is answered
 * within the API's longest wait, behind Lambda within the function's time), then says to poll with tasks/get.
 */
export async function legacyTaskResult(tasks: LegacySessionTasks, taskId: string, signal: AbortSignal): Promise<Result> {
  const deadline = tasks.resultWaitMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + tasks.resultWaitMs;
  // The session is asked once which of its tasks this is; then only the task is looked at until it ends.
  const errandTaskId = await errandTaskOf(tasks, taskId);
  if (errandTaskId === undefined) throw notFound(taskId);
  for (;;) {
    const task = await tasks.backend.get(taskId);
    if (!task) throw notFound(taskId);
    const shown = legacyTask(task);
    if (isTerminal(shown.status)) {
      const result = await endedResult(tasks, task, errandTaskId);
      return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
    }
    if (signal.aborted) throw new McpError(ErrorCode.InvalidRequest, `tasks/result for ${taskId} was cancelled by the client`);
    const waitMs = Math.min(shown.pollInterval ?? mcpTaskPollIntervalMs, deadline - Date.now());
    if (waitMs <= 0) {
      throw new McpError(ErrorCode.InvalidRequest, `${taskId} has not ended (${shown.status}) within the ${Math.round((tasks.resultWaitMs ?? 0) / 1000)} s this server waits in one request; ask tasks/get until it has ended, then tasks/result`);
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, waitMs));
  }
}

/**
 * A `tools/call` with `task`: the tool runs in the background (`async`) and the answer is its task. A call
 * that did not start is a JSON-RPC error with the tool's words (a task request is answered with a task or an
 * error). `call` runs the tool (the operator's policy and the session's call).
 */
export async function startLegacyTask(
  tasks: LegacySessionTasks,
  name: string,
  args: JsonObject,
  call: (args: JsonObject) => Promise<CallToolResult>,
): Promise<{ task: Task }> {
  if (!mcpBackgroundTools.includes(name)) {
    throw new McpError(ErrorCode.InvalidParams, `${name} does not run as a task (its execution.taskSupport is "forbidden"); only ${mcpBackgroundTools.join(' and ')} do, or call ${name} without "task"`);
  }
  const answer = await call({ ...args, async: true });
  const said = answer.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
  const errandTaskId = answer.isError ? undefined : startedTaskIdOf(said);
  if (errandTaskId === undefined) throw new McpError(ErrorCode.InvalidParams, `${name} did not start a task: ${said}`);
  // The session names the delegation (or run) once its start is recorded: a moment after the call answers.
  const deadline = Date.now() + legacyTaskStartWaitMs;
  for (;;) {
    const workflowId = (await tasks.sessionTasks()).find((task) => task.taskId === errandTaskId)?.workflowId;
    const task = workflowId ? await tasks.backend.get(workflowId).catch(() => undefined) : undefined;
    if (task) {
      const shown = legacyTask(task);
      // What the call said (and the notices it carried) goes with the status message: the client's model reads it there.
      return { task: { ...shown, statusMessage: shown.statusMessage ? `${said}\n${shown.statusMessage}` : said } };
    }
    if (Date.now() > deadline) throw new McpError(ErrorCode.InternalError, `${errandTaskId} started in the background but is not reachable as a task yet; read it with load (task_id ${errandTaskId}): ${said}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }
}
