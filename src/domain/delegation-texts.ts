import type { ApprovalDecision, TextPart } from '../contracts/agent-wire';
import { peekLiveTextChars } from '../contracts/limits/workflow';
import type { LiveText } from '../contracts/live-text';
import type { AnswerCap } from '../contracts/model';
import type { BudgetCap } from '../contracts/subagent';
import type { PendingApproval } from '../contracts/subagent-messages';
import type { SubagentPeek, SubagentResult } from '../contracts/subagent-result';
import { checkName } from './check-texts';
import { childWordsClosing, childWordsOpening, escapeChildWords } from './child-words';
import { worktreeLine } from './worktree-names';

/**
 * Texts the parent's model reads about its delegations (SEMANTICS §2, §5). Pure and deterministic (used
 * in workflow code); tests pin the wording, so change it deliberately. Where a task's output was cut to a
 * preview, the formatters put a reference to the stored message in its place, so the whole text reaches
 * the model without passing through workflow history.
 *
 * A task's own words (output, partial output, diagnostics, tool arguments) are fenced and escaped
 * (child-words.ts): only errand writes a line that starts with `[task notice]`.
 */

/** First line of a run that did not complete: how it ended. */
export function endedLine(result: Pick<SubagentResult, 'status' | 'turns' | 'diagnostic' | 'budget'>): string {
  switch (result.status) {
    case 'completed':
      return 'The subagent completed.';
    case 'truncated':
      if (result.diagnostic?.startsWith(answerCapPrefix) || result.diagnostic?.startsWith(contextRunOutPrefix)) return `The subagent did not finish: ${result.diagnostic}.`;
      return `The subagent did not finish: its answer was cut off at the output token limit (${outputTokenLimitOf(result.diagnostic)} tokens).`;
    case 'max_turns':
      return `The subagent did not finish: it reached its turn limit after ${result.turns} turns.`;
    case 'budget':
      return `The subagent did not finish: it reached its ${result.budget === 'time' ? 'time' : result.budget === 'cost' ? 'cost' : 'token'} budget.`;
    case 'cancelled':
      return 'The subagent did not finish: it was cancelled.';
    case 'failed':
      return 'The subagent did not finish: it failed.';
    case 'declined':
      return 'The subagent did not finish: its result was declined.';
  }
}

const answerCapPrefix = "its answer was cut off at errand's answer ";
const contextRunOutPrefix = 'its answer was cut off when the model server ran out of context space';

/**
 * Why a run ended `truncated` (SEMANTICS §5): the output-token limit the call was made with, or one of
 * errand's own caps on one answer (bytes or time), named with its setting.
 */
export function truncationDiagnostic(maxOutputTokens: number, cap: AnswerCap | undefined): string {
  if (cap === undefined) return `its answer was cut off at the output token limit (${maxOutputTokens} tokens)`;
  if (cap.cap === 'context') {
    return `${contextRunOutPrefix}, about ${cap.limit} tokens into it (give each of the server's requests more context, or set a smaller maxOutputTokens on the model entry)`;
  }
  return cap.cap === 'bytes' ? `${answerCapPrefix}size cap (${cap.limit} bytes, ${cap.setting})` : `${answerCapPrefix}time cap (${cap.limit} ms, ${cap.setting})`;
}

/** The token count in a truncation diagnostic ("… limit (N tokens)"), or "?" when it has none. */
function outputTokenLimitOf(diagnostic: string | undefined): string {
  return /\((\d+) tokens\)/.exec(diagnostic ?? '')?.[1] ?? '?';
}

/** Why a delegation runs in the background although the call did not ask for it (agent `background: true`). */
export function forcedBackgroundReason(source: string | undefined): string {
  return `the agent ${source ? `"${source}" ` : ''}always runs in the background (background: true in its agent file)`;
}

/**
 * What a result adds after its output: the line about its git worktree (`isolation: worktree`), and the
 * whole output of a failed recipe check when the diagnostic holds only its start and end.
 */
function resultExtras(result: SubagentResult): TextPart[] {
  const parts: TextPart[] = [];
  const failure = result.checks?.passed === false ? result.checks.lastFailure : undefined;
  // A check's output is what the task's commands printed: the task's words, fenced and escaped like its text.
  if (failure?.outputKey) parts.push(`\nWhole output of ${checkName(failure)}:\n${childWordsOpening(undefined)}`, { blobKey: failure.outputKey, childWords: true }, childWordsClosing);
  if (result.worktree) parts.push(`\n${worktreeLine(result.worktree)}`);
  return parts;
}

/**
 * The output parts of a result, fenced as the task's own words: the inline text escaped, or a reference to
 * the stored whole text when it was cut (escaped by the activity that reads it). Empty when there is none.
 */
export function outputParts(result: SubagentResult, taskId?: string): TextPart[] {
  const text = result.status === 'completed' ? result.output : result.partialOutput;
  if (result.outputCut && result.outputRef) return [childWordsOpening(taskId), { ref: result.outputRef, childWords: true }, childWordsClosing];
  return text.length > 0 ? [`${childWordsOpening(taskId)}${escapeChildWords(text)}${childWordsClosing}`] : [];
}

/** A diagnostic line: the diagnostic may quote the task (a check's output), so it is escaped. */
function diagnosticLine(diagnostic: string): string {
  return `Diagnostic: ${escapeChildWords(diagnostic)}`;
}

/**
 * The result of a foreground delegation: the final text when it completed; otherwise an error whose
 * first line says why, then the diagnostic, then the partial output.
 */
export function formatForegroundResult(result: SubagentResult, taskId?: string): { parts: TextPart[]; isError: boolean } {
  const output = outputParts(result, taskId);
  const extras = resultExtras(result);
  if (result.status === 'completed') return { parts: [...(output.length > 0 ? output : ['(The subagent gave an empty answer.)']), ...extras], isError: false };
  const lines = [endedLine(result)];
  if (result.diagnostic) lines.push(diagnosticLine(result.diagnostic));
  if (output.length === 0) return { parts: [[...lines, 'It produced no output.'].join('\n'), ...extras], isError: true };
  return { parts: [`${lines.join('\n')}\nPartial output:\n`, ...output, ...extras], isError: true };
}

function seconds(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(1)}s`;
}

/** The result block `load(task_id)` returns for a finished task. */
export function formatTaskResultBlock(taskId: string, result: SubagentResult): TextPart[] {
  const lines = [
    `Task: ${taskId}`,
    `Status: ${result.status}`,
    `Duration: ${seconds(result.durationMs)}`,
    `Turns: ${result.turns}`,
  ];
  if (result.status !== 'completed') {
    lines.push(`Ended: ${endedLine(result)}`);
    if (result.diagnostic) lines.push(diagnosticLine(result.diagnostic));
  }
  const output = outputParts(result, taskId);
  lines.push('Output:');
  return [...(output.length > 0 ? [`${lines.join('\n')}\n`, ...output] : [`${lines.join('\n')}\n(none)`]), ...resultExtras(result)];
}

/**
 * What `load(task_id, peek: true)` shows; durations are computed against `now` (the parent's clock).
 * `live` is the text the task's model call has written so far (its turn in flight), shown as partial:
 * the end of it, at most {@link peekLiveTextChars} characters.
 */
export function formatPeek(taskId: string, peek: SubagentPeek | undefined, state: string, now: number, live?: LiveText): string {
  const lines = peek ? progressLines(taskId, peek, state, now) : [`Task: ${taskId}`, `State: ${state}`, 'No progress reported yet.'];
  if (live) {
    const cut = live.chars > peekLiveTextChars || live.partialText.length > peekLiveTextChars;
    lines.push(`Writing now (partial, turn ${live.turn}): ${cut ? '…' : ''}${escapeChildWords(live.partialText.slice(-peekLiveTextChars))}`);
  }
  return lines.join('\n');
}

function progressLines(taskId: string, peek: SubagentPeek, state: string, now: number): string[] {
  const lines = [
    `Task: ${taskId}`,
    `State: ${state}`,
    `Elapsed: ${seconds(now - peek.startedAt)}`,
    `Turns: ${peek.turns} of ${peek.maxTurns}`,
    `Idle: ${seconds(now - peek.lastActivityAt)}`,
    `Tool calls: ${peek.toolCalls}`,
    `Last tool call: ${peek.lastToolCall ? `${peek.lastToolCall.name} ${peek.lastToolCall.argumentsPreview} (turn ${peek.lastToolCall.turn})` : '(none)'}`,
    `Last assistant text: ${peek.lastAssistantText === undefined || peek.lastAssistantText === null ? '(none)' : escapeChildWords(peek.lastAssistantText)}`,
  ];
  if (peek.compactions) lines.push(`Context compactions: ${peek.compactions}`);
  if (peek.retry) lines.push(`Checks: attempt ${peek.retry.attempt} of ${peek.retry.attempts}, ${peek.retry.state}`);
  if (peek.pendingApprovals && peek.pendingApprovals.length > 0) {
    lines.push(`Waiting for approval: ${peek.pendingApprovals.map((pending) => `${pending.tool} (${pending.id})`).join(', ')}`);
  }
  return lines;
}

/** The answer when waiting for a task timed out: it keeps running. */
export function formatWaitTimeout(taskId: string, waitedMs: number): string {
  return (
    `Task ${taskId} is still running after waiting ${seconds(waitedMs)}; it keeps running in the background. ` +
    `Call load with source "${taskId}" to wait again, add peek: true to see its progress, or cancel: true to stop it.`
  );
}

/**
 * The settlement notice a parent receives when a background task ends, or when a continuable task's
 * activation settles (it then waits for the next send_message). The output follows as a reference when
 * it was cut (`outputRef` of the result).
 */
export function formatSettlementNotice(taskId: string, result: SubagentResult, final: boolean): { text: string; outputRef?: SubagentResult['outputRef']; after?: string } {
  const how = final
    ? result.status === 'completed' ? 'completed' : `ended: ${result.status}`
    : result.status === 'completed' ? 'answered and is waiting for your next send_message' : `stopped (${result.status}) and is waiting for your next send_message`;
  const lines = [`[task notice] Background task ${taskId} ${how}.`];
  if (result.status !== 'completed' && result.diagnostic) lines.push(diagnosticLine(result.diagnostic));
  // The worktree line goes before the output: a notice can carry only one reference, and it goes last.
  if (result.worktree) lines.push(worktreeLine(result.worktree));
  const output = outputParts(result, taskId);
  if (output.length === 0) return { text: [...lines, 'It left no final message.'].join('\n') };
  const [first] = output;
  if (output.length === 1 && typeof first === 'string') return { text: [...lines, `Final message (the task's own words):\n${first}`].join('\n') };
  return {
    text: `${lines.join('\n')}\nFinal message (the task's own words):\n${childWordsOpening(taskId)}`,
    ...(result.outputRef ? { outputRef: result.outputRef } : {}),
    after: childWordsClosing,
  };
}

/** The notice a parent gets when one of its tasks waits for an approval it may decide. */
export function formatApprovalNotice(taskId: string, pending: PendingApproval): string {
  return (
    `[task notice] Task ${taskId} waits for approval to call ${escapeChildWords(pending.tool)} with ${escapeChildWords(pending.argumentsPreview)}. ` +
    `Decide with approve(approval_id: "${pending.id}", decision: "approve" or "deny", reason), or leave it to a person ` +
    `(it counts as denied at ${new Date(pending.expiresAt).toISOString()}).`
  );
}

/** The tool result of a call that was denied (by a person, the parent, the timeout or the policy). */
export function formatDenial(tool: string, decision: ApprovalDecision): string {
  return `The call of ${tool} was denied by ${decision.by}${decision.reason ? `: ${decision.reason}` : '.'} Do not retry it; continue without it or finish with what you have.`;
}

/** Why a tool call was not run. */
export type NotRunCause = 'turn-limit' | 'cut-off' | 'budget' | 'time_budget' | 'cost_budget' | 'cancelled' | 'failed';

/** The "not run" cause of a run a cap stopped (its status is `budget` whichever cap it was): names the cap. */
export function capNotRunCause(cap: BudgetCap): NotRunCause {
  return cap === 'time' ? 'time_budget' : cap === 'cost' ? 'cost_budget' : 'budget';
}

/** The stored result of a tool call that was not run (SEMANTICS §5: every call gets exactly one result). */
export function notRunReason(cause: NotRunCause): string {
  switch (cause) {
    case 'turn-limit':
      return 'not run: the turn limit was reached before this call could run';
    case 'cut-off':
      return 'not run: the answer that made this call was cut off at the output token limit';
    case 'budget':
      return 'not run: the token budget was reached';
    case 'time_budget':
      return 'not run: the time budget was reached';
    case 'cost_budget':
      return 'not run: the cost budget was reached';
    case 'cancelled':
      return 'not run: the run was cancelled';
    case 'failed':
      return 'not run: the run failed before this call could run';
  }
}
