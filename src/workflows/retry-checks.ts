import type { ToolCallRef } from '../contracts/activities';
import { checkActivityMarginMs } from '../contracts/limits/sources';
import { toolNameSeparator } from '../contracts/limits/tools';
import { previewLength } from '../contracts/limits/workflow';
import type { RunCheckOutput } from '../contracts/run-activities';
import type { CheckFailure, CheckSummary } from '../contracts/subagent-result';
import type { RetryPolicy } from '../contracts/subagent';
import { checkNotRunDiagnostic, checksFailedDiagnostic, checkSummary, onFailureDiagnostic, retryEvent } from '../domain/check-texts';
import { preview } from '../domain/subagent-prompt';
import type { Agent } from './agent';
import type { RunOutcome } from './agent-loop';

/** A check that did not pass: it ran and failed, or it was not run at all (refused or denied). */
interface StepFailure {
  failure: CheckFailure;
  ran: boolean;
}

/** The tool whose policy a check falls under (a check is a shell command, like a `run_command` call). */
const runCommandTool = `developer${toolNameSeparator}run_command`;

/**
 * A recipe's goose `retry` (SEMANTICS §5): after the subagent answers, its checks run one by one in its
 * working directory (each an activity of its own, `check <n>: <command>` in the Web UI); the first that
 * fails stops them. All pass → the run completes. Otherwise the `on_failure` command runs, and the
 * subagent starts again from the recipe's instructions in a fresh conversation (Agent.startAttempt), up
 * to `maxRetries` more times; then the run fails with the last check's output. A check runs where
 * `run_command` may: under `ask` it waits for an approval like a tool call.
 */
export class RetryChecks {
  constructor(
    private readonly agent: Agent,
    private readonly policy: RetryPolicy,
  ) {}

  /** Attempts allowed: the first run and `maxRetries` more. */
  get attempts(): number {
    return this.policy.maxRetries + 1;
  }

  /** Shows in peek and the Web UI what the checks are doing. */
  show(state: string): void {
    this.agent.showRetry({ attempt: this.agent.state.attempt.number, attempts: this.attempts, state });
    this.agent.updateViews();
    this.agent.changed();
  }

  /**
   * Checks a finished run and starts the subagent again while they fail. `again` starts the next attempt
   * (a fresh conversation) and returns how it ended. A run that did not answer (turn limit, budget, ...)
   * is returned as it is: there is nothing to check.
   */
  async afterAnswer(first: RunOutcome, again: () => Promise<RunOutcome>): Promise<RunOutcome> {
    let run = first;
    for (;;) {
      if (run.status !== 'completed') return run;
      const failed = await this.runChecks();
      const attempt = this.agent.state.attempt.number;
      if (!failed) return { ...run, checks: { attempts: attempt, passed: true } };
      const failure = failed.failure;
      const checks: CheckSummary = { attempts: attempt, passed: false, lastFailure: failure };
      // A check the policy or a person refused would be refused again: starting the subagent again cannot help.
      if (!failed.ran) return { status: 'failed', diagnostic: checkNotRunDiagnostic(failure), checks };
      if (attempt >= this.attempts) return { status: 'failed', diagnostic: checksFailedDiagnostic(attempt, failure), checks };
      const cleanup = await this.runOnFailure();
      if (cleanup) return { status: 'failed', diagnostic: onFailureDiagnostic(attempt, cleanup.failure), checks: { ...checks, lastFailure: cleanup.failure } };
      this.agent.remember('event', retryEvent(attempt, this.attempts, failure));
      this.agent.startAttempt();
      this.show('working');
      run = await again();
    }
  }

  /** Runs the checks in order; returns the first failure, or undefined when all pass. */
  private async runChecks(): Promise<StepFailure | undefined> {
    const checks = this.policy.checks;
    for (const [index, check] of checks.entries()) {
      const number = index + 1;
      this.show(`running check ${number} of ${checks.length}`);
      const failure = await this.runStep(number, check.command, this.policy.timeoutSeconds);
      if (failure) {
        this.show(`check ${number} failed`);
        return failure;
      }
    }
    this.show('checks passed');
    return undefined;
  }

  /** Runs `on_failure`, if the recipe has one; returns its failure (the run then ends), or undefined. */
  private async runOnFailure(): Promise<StepFailure | undefined> {
    const command = this.policy.onFailure;
    if (command === undefined) return undefined;
    this.show('running on_failure');
    return this.runStep(0, command, this.policy.onFailureTimeoutSeconds);
  }

  /** One check (`check` ≥ 1) or the `on_failure` command (`check` 0), with an approval first when the policy asks. */
  private async runStep(check: number, command: string, timeoutSeconds: number): Promise<StepFailure | undefined> {
    const agent = this.agent;
    const request = {
      workflowId: agent.options.workflowId,
      conversationId: agent.conversationId,
      step: check === 0 ? 'on-failure' : `check-${check}`,
      command,
      workingDir: agent.options.workingDir,
      timeoutSeconds,
      ...(agent.options.toolPolicy ? { toolPolicy: agent.options.toolPolicy } : {}),
    };
    const options = { summary: checkSummary(check, command), startToCloseTimeout: timeoutSeconds * 1_000 + checkActivityMarginMs };
    let output: RunCheckOutput = await agent.busy(() => agent.activities.checks.runCheck.executeWithOptions(options, [request]));
    if (!output.ran && 'needsApproval' in output) {
      // The approval id's message number is the next one of this attempt: no message of the workflow has it.
      const call: ToolCallRef = { id: request.step, name: runCommandTool, argumentsPreview: preview(JSON.stringify({ command }), previewLength) };
      const approval = await agent.approvals.await(call, agent.state.attempt.messageBase + agent.state.length, check);
      output = await agent.busy(() => agent.activities.checks.runCheck.executeWithOptions(options, [{ ...request, approval }]));
    }
    if (!output.ran) {
      const reason = `was not run: ${'refused' in output ? output.refused : 'it needs an approval'}`;
      return { ran: false, failure: { check, command, exitCode: null, reason, outputPreview: '' } };
    }
    if (output.passed) return undefined;
    return {
      ran: true,
      failure: { check, command, exitCode: output.exitCode, reason: output.reason, outputPreview: output.outputPreview, ...(output.outputKey ? { outputKey: output.outputKey } : {}) },
    };
  }
}
