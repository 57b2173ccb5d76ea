import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { ChatMessage, ModelRequest } from '../../src/contracts/model';
import type { SessionInput } from '../../src/contracts/session';
import { sendMessageUpdate } from '../../src/contracts/subagent-messages';
import type { SubagentInput } from '../../src/contracts/subagent';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import type { WorkerDependencies } from '../../src/worker/worker-dependencies';
import { ConversationScripts } from './conversation-scripts';
export { until } from './polling';
import { subagentInput } from './temporal';
import { useWorkerStack } from './worker-stack';

/**
 * One worker with a scripted model (ConversationScripts) on a task queue of its own, a client, and a
 * working directory: what the tests of how delegations run (checks, structured output, worktrees,
 * background agents) share. Everything but the model is real. The worker is a {@link useWorkerStack}.
 */
export interface RunHarness {
  readonly client: Client;
  readonly taskQueue: string;
  readonly scripts: ConversationScripts;
  readonly dependencies: WorkerDependencies;
  /** A fresh id for a workflow this file starts. */
  nextId(name: string): string;
  /** Starts a subagent workflow directly (as the API does: no parent). */
  startSubagent(id: string, overrides: Partial<SubagentInput> & Pick<SubagentInput, 'prompt' | 'workingDir'>): Promise<WorkflowHandle>;
  /** Starts a session in `workingDir` and sends it a first message. */
  startSession(workingDir: string, message: string, overrides?: Partial<SessionInput>): Promise<WorkflowHandle>;
}

/**
 * Registers the file's harness (its worker's `beforeAll`/`afterAll`, through {@link useWorkerStack}) and
 * returns it. `env` is extra worker configuration (ERRAND_*); a function when it names what a hook registered
 * before started (it is called when the worker starts).
 */
export function useRunHarness(label: string, env: Record<string, string> | (() => Record<string, string>) = {}): RunHarness {
  const scripts = new ConversationScripts();
  const stack = useWorkerStack(() => ({ label, scripted: { scripted: { model: scripts.model } }, env: typeof env === 'function' ? env() : env }));
  return {
    get client() {
      return stack.client;
    },
    get taskQueue() {
      return stack.taskQueue;
    },
    scripts,
    get dependencies() {
      return stack.dependencies;
    },
    nextId: (name) => stack.nextId(name),
    startSubagent: (id, overrides) => stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId: id, args: [subagentInput(overrides)] }),
    async startSession(workingDir, message, overrides = {}) {
      const handle = await stack.startSession({ workingDir, ...overrides });
      await handle.executeUpdate(sendMessageUpdate, { args: [{ message }] });
      return handle;
    },
  };
}

/** A fresh working directory (symlinks resolved, so paths compare as the worker sees them). */
export function freshFolder(prefix: string): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}


/** The result of a child task of a session. */
export function childResult(client: Client, sessionId: string, task: string): Promise<SubagentResult> {
  return client.workflow.getHandle(`${sessionId}~${task}`).result();
}

/** The tool result with this name in a request (the last one). */
export function toolResult(request: ModelRequest | undefined, name: string): Extract<ChatMessage, { role: 'tool' }> | undefined {
  return (request?.messages ?? []).filter((message): message is Extract<ChatMessage, { role: 'tool' }> => message.role === 'tool' && message.toolName === name).pop();
}
