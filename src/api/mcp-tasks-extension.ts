import { ProtocolError, type Server } from '@modelcontextprotocol/server';
import { z } from 'zod';

/**
 * The MCP Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the 2026-07-28 server: the task
 * answer of a `tools/call`, and `tasks/get`, `tasks/update`, `tasks/cancel`. The MCP SDK errand pins has no
 * server side of it, so its wire shapes and handlers are written here, in this one module; decision 0042 says
 * when to drop it (an SDK that serves the extension). What a task is (a delegation) is errand's business,
 * behind {@link McpTaskBackend}.
 */

/** The extension's identifier. */
export const tasksExtension = 'io.modelcontextprotocol/tasks';

/** The server's capability (`server/discover`): the extension, no settings. */
export const taskCapability = { [tasksExtension]: {} };

/** A task's status (SEP-2663): `completed`, `failed` and `cancelled` are terminal. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** A task as the extension shows it. */
export interface McpTask {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601. */
  lastUpdatedAt: string;
  /** From creation, or null for unlimited. */
  ttlMs: number | null;
  pollIntervalMs?: number;
}

/** An elicitation the client answers with `tasks/update` (the MRTR request shape). */
export interface TaskInputRequest {
  method: 'elicitation/create';
  params: { mode: 'form'; message: string; requestedSchema: { type: 'object'; properties: Record<string, Record<string, unknown>>; required?: string[] } };
}

/** A task with what its status carries: the input it waits for, its result, or its JSON-RPC error. */
export type DetailedMcpTask =
  | (McpTask & { status: 'working' | 'cancelled' })
  | (McpTask & { status: 'input_required'; inputRequests: Record<string, TaskInputRequest> })
  | (McpTask & { status: 'completed'; result: { resultType: 'complete'; content: { type: 'text'; text: string }[]; isError: boolean } })
  | (McpTask & { status: 'failed'; error: { code: number; message: string } });

/** errand's tasks, by id, for the caller the request authenticated (the backend is built per request). */
export interface McpTaskBackend {
  /** The task's state now; undefined when there is no such task for this caller. */
  get(taskId: string): Promise<DetailedMcpTask | undefined>;
  /** Applies the client's answers to the task's outstanding input requests (unknown keys are ignored); false when there is no such task. */
  update(taskId: string, inputResponses: Record<string, unknown>): Promise<boolean>;
  /** Asks the task (and everything under it) to stop; false when there is no such task. */
  cancel(taskId: string): Promise<boolean>;
}

/** JSON-RPC "invalid params" (SEP-2663: an unknown or invalid task id). */
const invalidParams = -32602;

const taskIdParams = z.object({ taskId: z.string().min(1) }).loose();
const updateParams = taskIdParams.extend({ inputResponses: z.record(z.string(), z.unknown()).optional() });

function notFound(taskId: string, verb: string): ProtocolError {
  return new ProtocolError(invalidParams, `Failed to ${verb} task: Task not found (${taskId} is not a task of this API key)`);
}

/** Registers `tasks/get`, `tasks/update` and `tasks/cancel` on a 2026-07-28 server (custom methods of the SDK). */
export function registerTaskHandlers(server: Server, tasksFor: () => McpTaskBackend): void {
  server.setRequestHandler('tasks/get', { params: taskIdParams }, async (params) => {
    const task = await tasksFor().get(params.taskId);
    if (!task) throw notFound(params.taskId, 'retrieve');
    return { resultType: 'complete', ...task } as never;
  });
  server.setRequestHandler('tasks/update', { params: updateParams }, async (params, ctx) => {
    // The SDK lifts `inputResponses` out of the params it hands over (its multi-round-trip handling).
    const inputResponses = ctx.mcpReq.inputResponses ?? params.inputResponses ?? {};
    if (!(await tasksFor().update(params.taskId, inputResponses))) throw notFound(params.taskId, 'update');
    return { resultType: 'complete' } as never;
  });
  server.setRequestHandler('tasks/cancel', { params: taskIdParams }, async (params) => {
    if (!(await tasksFor().cancel(params.taskId))) throw notFound(params.taskId, 'cancel');
    return { resultType: 'complete' } as never;
  });
}

/** The answer of a `tools/call` that became a task (`CreateTaskResult`, `resultType: "task"`). */
export function createTaskResult(task: McpTask): McpTask & { resultType: 'task' } {
  return { resultType: 'task', ...task };
}

/** Whether a request's client capabilities (its `_meta` envelope) declare the extension: only such a client gets a task. */
export function clientTakesTasks(envelope: unknown): boolean {
  const capabilities = (envelope as { 'io.modelcontextprotocol/clientCapabilities'?: { extensions?: Record<string, unknown> } } | undefined)?.['io.modelcontextprotocol/clientCapabilities'];
  return capabilities?.extensions?.[tasksExtension] !== undefined;
}
