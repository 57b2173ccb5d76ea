import { CancellationScope, setWorkflowOptions } from '@temporalio/workflow';
import { isCapStatus, type SubagentInput } from '../contracts/subagent';
import type { SubagentResult } from '../contracts/subagent-result';
import type { RunOutcome } from './agent-loop';
import { SubagentSteps } from './subagent-steps';
import { subagentDefinitionOptions } from './versioning-behaviour';
import { outcomeOfError } from './workflow-outcome';

/**
 * One delegation: the agent loop until a final answer, `max_turns`, the token budget, a cut-off answer,
 * cancellation or a failure. A continuable subagent lives as a series of activations: each one settles
 * (a notice to its parent, whatever its status) and the subagent waits for the next message — or a
 * notice from its own tasks — until it is cancelled, its parent ends, its budget is crossed or it has
 * been idle for its idle timeout. The conversation lives in the conversation store; history holds
 * counters and previews, and the workflow continues as new when the server suggests it. The steps are in
 * subagent-steps.ts.
 */
export async function subagentWorkflow(input: SubagentInput): Promise<SubagentResult> {
  const steps = new SubagentSteps(input);
  const { run, agent } = steps;
  let outcome: RunOutcome;
  try {
    outcome = await run.scope.run(async (): Promise<RunOutcome> => {
      let resume = input.carried?.phase === 'running';
      if (!input.carried) await steps.prepare();
      let waiting = input.carried?.phase === 'waiting';
      // A run continued from a wait waits again (decision 0021: it may continue as new while nothing is queued).
      if (waiting && agent.quietWaits) agent.setStatus('waiting', true);
      for (;;) {
        if (!waiting) {
          const activation = await steps.activate(resume);
          resume = false;
          if (!steps.continuable || isCapStatus(activation.status)) return activation;
          await steps.settleActivation(activation);
        }
        waiting = false;
        run.idle.arm();
        // Waiting adds no history (decision 0021): the wait also ends when the server suggests continue-as-new.
        // A refresh ends the wait too: a run from before decision 0021 has no other way to continue as new.
        await agent.waitFor(() => run.hasWork() || run.idle.expired() || (agent.quietWaits && run.continueAsNewDue()) || run.refreshDue());
        if (!run.hasWork()) {
          if ((agent.quietWaits || run.refreshDue()) && !run.idle.expired()) await steps.continueIfSuggested('waiting', run.refreshDue());
          return { status: 'completed', diagnostic: `ended after ${run.idleSeconds} s without a message (idle timeout)` };
        }
        await steps.continueIfSuggested('waiting');
        agent.setStatus('running');
        agent.appendNextMessage();
      }
    });
  } catch (error) {
    outcome = outcomeOfError(error, run.cancelReason, agent.budgetCrossed);
  }
  // The end runs to completion even when the run was cancelled.
  return CancellationScope.nonCancellable(() => steps.end(outcome));
}

// Pinned, or moving up for a continuable: decided from the run's memo when it starts (decision 0030).
setWorkflowOptions(subagentDefinitionOptions, subagentWorkflow);
