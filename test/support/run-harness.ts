import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client, Connection, WorkflowHandle } from '@temporalio/client';
import type { ChatMessage, ModelRequest } from '../../src/contracts/model';
import type { SessionInput } from '../../src/contracts/session';
import { sendMessageUpdate } from '../../src/contracts/subagent-messages';
import type { SubagentInput } from '../../src/contracts/subagent';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import type { WorkerDependencies } from '../../src/worker/worker-dependencies';
import { ConversationScripts } from './conversation-scripts';
export { until } from './polling';
import { sessionInput, startTestWorker, subagentInput, testClient, testDependencies, uniqueTaskQueue, type RunningWorker } from './temporal';

/**
 * One worker with a scripted model (ConversationScripts) on a task queue of its own, a client, and a
 * working directory: what the tests of how delegations run (checks, structured output, worktrees,
 * background agents) share. Everything but the model is real.
 */
export interface RunHarness {
  client: Client;
  taskQueue: string;
  scripts: ConversationScripts;
  dependencies: WorkerDependencies;
  /** A fresh id for a workflow this file starts. */
  nextId(name: string): string;
  /** Starts a subagent workflow directly (as the API does: no parent). */
  startSubagent(id: string, overrides: Partial<SubagentInput> & Pick<SubagentInput, 'prompt' | 'workingDir'>): Promise<WorkflowHandle>;
  /** Starts a session in `workingDir` and sends it a first message. */
  startSession(workingDir: string, message: string, overrides?: Partial<SessionInput>): Promise<WorkflowHandle>;
  stop(): Promise<void>;
}

/** Starts a harness; `env` is extra worker configuration (ERRAND_*). */
export async function startRunHarness(label: string, env: Record<string, string> = {}): Promise<RunHarness> {
  const { client, connection }: { client: Client; connection: Connection } = await testClient();
  const scripts = new ConversationScripts();
  const { dependencies } = testDependencies({ scripted: { scripted: { model: scripts.model } }, env });
  const taskQueue = uniqueTaskQueue(label);
  const worker: RunningWorker = await startTestWorker(taskQueue, dependencies);
  let counter = 0;
  const nextId = (name: string) => {
    counter += 1;
    return `errand-${name}-${Date.now()}-${counter}`;
  };
  return {
    client,
    taskQueue,
    scripts,
    dependencies,
    nextId,
    startSubagent: (id, overrides) => client.workflow.start('subagentWorkflow', { taskQueue, workflowId: id, args: [subagentInput(overrides)] }),
    async startSession(workingDir, message, overrides = {}) {
      const handle = await client.workflow.start('sessionWorkflow', { taskQueue, workflowId: nextId('session'), args: [sessionInput({ workingDir, ...overrides })] });
      await handle.executeUpdate(sendMessageUpdate, { args: [{ message }] });
      return handle;
    },
    async stop() {
      await worker.stop();
      await connection.close();
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
