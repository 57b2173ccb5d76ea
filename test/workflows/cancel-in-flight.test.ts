import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import { cancelSignal } from '../../src/contracts/subagent-messages';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { subagentInput, testActivitySettings } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';

/**
 * A cancel stops an in-flight model call on the worker of its workflow without waiting for a heartbeat
 * (SEMANTICS §6, decision 0022). Heartbeats are made as rare as the settings allow — live text at most once
 * a minute, a heartbeat timeout of ten minutes, so the keep-alive is four minutes away — so the only way the
 * cancel can reach the call within the test is the workflow's in-flight sink. The scripted OpenAI server sees
 * the streaming request's connection close; the run still ends `cancelled` with what the model had written,
 * which the activity can report only after Temporal confirmed the cancellation. A long `run_command` is
 * stopped the same way.
 */

let server: ScriptedOpenAIServer;
beforeAll(async () => {
  server = await startScriptedOpenAIServer({ streamChunkChars: 4 });
});
afterAll(async () => {
  await server?.close();
});

const stack = useWorkerStack(() => ({
  label: 'cancel-in-flight',
  providers: [{ name: 'wire', kind: 'openai-compatible', baseUrl: server.url, models: ['wire-model'] }],
  env: { ERRAND_LIVE_TEXT_INTERVAL_MS: '60000' },
}));

describe('a cancel reaches an in-flight call on the same worker', () => {
  test('the streaming request is closed and the run ends cancelled with the text so far, without a heartbeat to carry the cancel', async () => {
    // A long answer streamed slowly: it would take minutes to finish.
    const answer = `Partial words ${'and more words '.repeat(400)}`;
    server.setResponder(() => ({ text: answer, chunkDelayMs: 100 }));
    expect(stack.dependencies.heartbeats.liveTextIntervalMs).toBe(60_000);
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `errand-cancel-in-flight-${Date.now()}`,
      args: [subagentInput({
        prompt: 'Write at length.',
        workingDir: stack.workingDir,
        route: { provider: 'wire', model: 'wire-model' },
        toolsets: [],
        activity: { ...testActivitySettings, modelHeartbeatTimeoutMs: 600_000, modelCallTimeoutMs: 900_000 },
      })],
    });
    await server.waitForRequests(1, 30_000);
    // The call has been streaming for a while (the model has written something) and is registered in flight.
    await new Promise((resolveWait) => setTimeout(resolveWait, 1_500));
    expect(stack.dependencies.heartbeats.inFlight.size).toBe(1);
    await handle.signal(cancelSignal, { reason: 'enough' });
    // Bounded by half the live-text interval: no heartbeat of the call could have carried the cancel by then.
    await server.waitFor((requests) => requests[0]?.aborted === true, 30_000, 'the model request to be aborted (by the in-flight sink, before any heartbeat)');
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('cancelled');
    expect(result.partialOutput.startsWith('Partial words')).toBe(true);
    expect(result.partialOutput.length).toBeLessThan(answer.length);
    expect(server.requests).toHaveLength(1);
    expect(server.rejectedRequests).toEqual([]);
    expect(stack.dependencies.heartbeats.inFlight.size).toBe(0);
  });

  test('a long run_command is stopped the same way: the run ends cancelled long before any keep-alive', async () => {
    server.reset();
    server.setResponder(() => ({ toolCalls: [{ name: 'developer__run_command', arguments: { command: 'sleep 300' } }] }));
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `errand-cancel-in-flight-tool-${Date.now()}`,
      args: [subagentInput({
        prompt: 'Wait a while.',
        workingDir: stack.workingDir,
        route: { provider: 'wire', model: 'wire-model' },
        toolsets: ['developer'],
        activity: { ...testActivitySettings, modelHeartbeatTimeoutMs: 600_000, toolCallTimeoutMs: 900_000 },
      })],
    });
    await server.waitForRequests(1, 30_000);
    // Wait until the command runs: the tool call is the pending activity, started on this worker.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const described = await stack.client.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId: handle.workflowId } });
      const tool = described.pendingActivities?.find((activity) => activity.activityType?.name === 'runTool');
      if (tool?.lastStartedTime && stack.dependencies.heartbeats.inFlight.size === 1) break;
      if (Date.now() > deadline) throw new Error('the run_command call did not start');
      await new Promise((resolveWait) => setTimeout(resolveWait, 50));
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 500)); // the command itself has started
    await handle.signal(cancelSignal, { reason: 'enough waiting' });
    // The keep-alive of this call is 240 s away (0.4 × 600 s): only the sink can end it within the bound.
    const bound = new Promise<'no cancel'>((resolveBound) => setTimeout(() => resolveBound('no cancel'), 30_000).unref());
    const result = await Promise.race([handle.result() as Promise<SubagentResult>, bound]);
    expect(result).not.toBe('no cancel');
    expect((result as SubagentResult).status).toBe('cancelled');
    expect(server.requests).toHaveLength(1);
    expect(server.rejectedRequests).toEqual([]);
    expect(stack.dependencies.heartbeats.inFlight.size).toBe(0);
  });
});
