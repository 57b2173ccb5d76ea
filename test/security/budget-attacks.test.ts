import { describe, expect } from 'vitest';
import type { SessionResult } from '../../src/contracts/session';
import { sendMessageUpdate } from '../../src/contracts/subagent-messages';
import { ConversationScripts } from '../support/conversation-scripts';
import { sessionInput } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';
import { attack } from './attack-stack';

/**
 * The attack suite: budgets that add up (issue 40, finding 5). A prompt-injected session model with a
 * $0.25 cost cap asks for ten delegations of $0.10 each in one turn. Each child used to be given the
 * session's whole remainder, so together they could spend four times what the session had. Now each
 * child's cap is fitted to what its running siblings do not hold and reserved while it runs: the session
 * and its children spend at most the cap plus one call, and the delegations past it are refused, naming
 * the tasks that hold the rest.
 */

const scripts = new ConversationScripts();
/** Every call of the attack costs 25,000 input tokens at $2 per million: $0.05. */
const call = { inputTokens: 25_000, outputTokens: 0 };
const callMicroUsd = 50_000;
const capMicroUsd = 250_000;
const children = 10;
const stack = useWorkerStack({ label: 'budget-attacks', scripted: { scripted: { model: scripts.model, models: [{ id: 'scripted-model', prices: { input: 2, output: 8 } }] } } });

describe('budgets that add up', () => {
  attack('a $0.25 session fans out to ten $0.10 children in one turn: all together spend at most $0.25 plus one call', async () => {
    // A child works two calls ($0.10) when its cap allows, and stops at its cap otherwise.
    const child = scripts.add('fan-child', (_request, index) => (index === 0 ? { toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }], usage: call } : { text: 'spent it', usage: call }));
    const session = scripts.add('fan-out', (_request, index) =>
      index === 0
        ? { toolCalls: Array.from({ length: children }, (_, n) => ({ name: 'delegate', arguments: { instructions: `Spend it ${n} ${child}`, cost_budget_usd: 0.1 } })), usage: call }
        : { text: 'done', usage: call },
    );
    const handle = await stack.client.workflow.start('sessionWorkflow', { taskQueue: stack.taskQueue, workflowId: `errand-budget-fan-out-${Date.now()}`, args: [sessionInput({ workingDir: stack.workingDir, costBudgetMicroUsd: capMicroUsd, maxDepth: 2 })] });
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `Fan out ${session}` }] });
    const ended: SessionResult = await handle.result();

    // Every model call costs the same: what was spent is the number of calls made, session's and children's.
    const spent = (scripts.of('fan-out').length + scripts.of('fan-child').length) * callMicroUsd;
    expect(spent).toBeLessThanOrEqual(capMicroUsd + callMicroUsd);
    expect(ended.status).toBe('budget');
    // The session's first call left $0.20: two children got $0.10 each, the other eight were refused.
    // (The session stopped at its cap before another call: its stored conversation holds the results.)
    const description = await handle.describe();
    const stored = await stack.dependencies.conversations.read(`${handle.workflowId}@${description.runId}`, 3 + children);
    const delegations = stored.flatMap((message) => (message.role === 'tool' && message.toolName === 'delegate' ? [message] : []));
    const refused = delegations.filter((result) => result.content.startsWith('delegate was not started'));
    expect(delegations).toHaveLength(children);
    expect(refused).toHaveLength(children - 2);
    expect(delegations.filter((result) => result.content.includes('spent it'))).toHaveLength(2);
    for (const result of refused) expect(result.content).toMatch(/^delegate was not started: your running tasks \(task-\d+, task-\d+\) hold the \$0\.20 left of your cost budget; wait for one of them to end/);
    expect(scripts.model.rejectedCalls).toEqual([]);
  }, 120_000);
});
