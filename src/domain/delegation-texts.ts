import type { PendingApproval, SubagentPeek, SubagentResult } from '../contracts/subagent';

/**
 * Texts the parent's model reads about its delegations (SEMANTICS §2). Pure and deterministic (used
 * in workflow code); tests pin the wording, so change it deliberately.
 */

/** First line of a run that did not complete: how it ended. */
export function endedLine(result: SubagentResult): string {
  switch (result.status) {
    case 'completed':
      return 'The subagent completed.';
    case 'max_turns':
      return `The subagent did not finish: it reached its turn limit after ${result.turns} turns.`;
    case 'budget':
      return 'The subagent did not finish: it reached its token budget.';
    case 'cancelled':
      return 'The subagent did not finish: it was cancelled.';
    case 'failed':
      return 'The subagent did not finish: it failed.';
  }
}

/**
 * The result of a foreground delegation: the final text when it completed; otherwise an error whose
 * first line says why, then the diagnostic, then the partial output.
 */
export function formatForegroundResult(result: SubagentResult): { text: string; isError: boolean } {
  if (result.status === 'completed') return { text: result.output, isError: false };
  const lines = [endedLine(result)];
  if (result.diagnostic) lines.push(`Diagnostic: ${result.diagnostic}`);
  lines.push(result.partialOutput ? `Partial output:\n${result.partialOutput}` : 'It produced no output.');
  return { text: lines.join('\n'), isError: true };
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** The result block `load(task_id)` returns for a finished task. */
export function formatTaskResultBlock(taskId: string, result: SubagentResult): string {
  const lines = [
    `Task: ${taskId}`,
    `Status: ${result.status}`,
    `Duration: ${seconds(result.durationMs)}`,
    `Turns: ${result.turns}`,
  ];
  if (result.status !== 'completed') {
    lines.push(`Ended: ${endedLine(result)}`);
    if (result.diagnostic) lines.push(`Diagnostic: ${result.diagnostic}`);
  }
  const output = result.status === 'completed' ? result.output : result.partialOutput;
  lines.push('Output:', output.length > 0 ? output : '(none)');
  return lines.join('\n');
}

/** What `load(task_id, peek: true)` shows. */
export function formatPeek(taskId: string, peek: SubagentPeek | undefined, state: string): string {
  if (!peek) return `Task: ${taskId}\nState: ${state}\nNo progress reported yet.`;
  const lines = [
    `Task: ${taskId}`,
    `State: ${state}`,
    `Elapsed: ${seconds(peek.elapsedMs)}`,
    `Turns: ${peek.turns} of ${peek.maxTurns}`,
    `Idle: ${seconds(peek.idleMs)}`,
    `Tool calls: ${peek.toolCalls}`,
    `Last tool call: ${peek.lastToolCall ? `${peek.lastToolCall.name} ${peek.lastToolCall.argumentsPreview} (turn ${peek.lastToolCall.turn})` : '(none)'}`,
    `Last assistant text: ${peek.lastAssistantText ?? '(none)'}`,
  ];
  return lines.join('\n');
}

/** The answer when waiting for a task timed out: it keeps running. */
export function formatWaitTimeout(taskId: string, waitedMs: number): string {
  return (
    `Task ${taskId} is still running after waiting ${seconds(waitedMs)}; it keeps running in the background. ` +
    `Call load with source "${taskId}" to wait again, add peek: true to see its progress, or cancel: true to stop it.`
  );
}

/** The settlement notice a parent receives when a background task ends or answers. */
export function formatSettlementNotice(taskId: string, result: SubagentResult, final: boolean): string {
  const how = final ? (result.status === 'completed' ? 'completed' : `ended: ${result.status}`) : 'answered and is waiting for your next send_message';
  const message = result.status === 'completed' ? result.output : result.partialOutput;
  const lines = [`[task notice] Background task ${taskId} ${how}.`];
  if (final && result.status !== 'completed' && result.diagnostic) lines.push(`Diagnostic: ${result.diagnostic}`);
  lines.push(message.length > 0 ? `Final message:\n${message}` : 'It left no final message.');
  return lines.join('\n');
}

/** The notice a parent gets when one of its tasks waits for an approval. */
export function formatApprovalNotice(taskId: string, pending: PendingApproval): string {
  return (
    `[task notice] Task ${taskId} waits for approval to call ${pending.tool} with ${pending.argumentsPreview}. ` +
    `Decide with approve(approval_id: "${pending.id}", decision: "approve" or "deny", reason), or leave it to a person ` +
    `(it counts as denied at ${new Date(pending.expiresAt).toISOString()}).`
  );
}
