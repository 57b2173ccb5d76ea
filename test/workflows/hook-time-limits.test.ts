import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import { ConversationScripts, toolResults } from '../support/conversation-scripts';
import { subagentInput, testActivitySettings } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';

/**
 * Hook and command time limits fit the activity that runs them (decision 0032): an activity that ran out of
 * time would be retried and run its hooks and its tool again, three times, and then fail the run. Here the
 * tool-call limit is lowered to 2 s by configuration, and hooks and a command that take 3 s (and may take
 * up to 10) run once each; the run completes.
 */

const scripts = new ConversationScripts();
/** The tool-call limit of these runs: shorter than what their hooks and command take. */
const activity = { ...testActivitySettings, toolCallTimeoutMs: 2_000 };
const stack = useWorkerStack({ label: 'hook-time-limits', scripted: { scripted: { model: scripts.model } } });

/** A command that notes each run in `file`, then takes 3 s. */
function slow(file: string, word: string): string {
  return `echo ${word} >> ${JSON.stringify(join(stack.workingDir, file))}; sleep 3`;
}

function runs(file: string): string[] {
  return readFileSync(join(stack.workingDir, file), 'utf8').trim().split('\n');
}

describe('time limits of hooks and commands', () => {
  test('PreToolUse, PostToolUse and Stop hooks of up to 10 s each, taking 3 s, run once each in a 2 s tool-call limit; the run completes', async () => {
    const marker = scripts.add('slow-hooks', [
      { toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }] },
      { text: 'listed' },
    ]);
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `errand-hook-limits-${Date.now()}`,
      args: [subagentInput({
        prompt: `List it ${marker}`,
        workingDir: stack.workingDir,
        activity,
        hooks: {
          agentName: 'slow-agent',
          file: 'agents/slow-agent.md',
          preToolUse: [{ hooks: [{ command: slow('hook-runs.txt', 'pre'), timeoutSeconds: 10 }] }],
          postToolUse: [{ hooks: [{ command: slow('hook-runs.txt', 'post'), timeoutSeconds: 10 }] }],
          stop: [{ hooks: [{ command: slow('hook-runs.txt', 'stop'), timeoutSeconds: 10 }] }],
        },
      })],
    });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.output).toBe('listed');
    expect(runs('hook-runs.txt')).toEqual(['pre', 'post', 'stop']);
    const [listing] = toolResults(scripts.of('slow-hooks')[1]);
    expect(listing?.isError).not.toBe(true);
  }, 60_000);

  test('run_command with a timeout_ms over the tool-call limit runs once and gets its output', async () => {
    const marker = scripts.add('slow-command', [
      { toolCalls: [{ name: 'developer__run_command', arguments: { command: `${slow('command-runs.txt', 'ran')}; echo finished`, timeout_ms: 10_000 } }] },
      { text: 'ran it' },
    ]);
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `errand-command-limit-${Date.now()}`,
      args: [subagentInput({ prompt: `Run it ${marker}`, workingDir: stack.workingDir, activity })],
    });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(runs('command-runs.txt')).toEqual(['ran']);
    const [ran] = toolResults(scripts.of('slow-command')[1]);
    expect(ran?.isError).not.toBe(true);
    expect(ran?.content).toContain('finished');
  }, 60_000);
});
