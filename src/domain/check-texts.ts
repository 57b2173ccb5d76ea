import type { CheckFailure } from '../contracts/subagent-result';

/**
 * Texts about a recipe's checks (goose `retry`, SEMANTICS §5): activity summaries, what peek shows, and
 * the diagnostic of a run whose checks failed. Pure; tests pin the wording.
 */

/** Longest command shown in an activity summary or a peek line. */
const commandPreviewChars = 120;

function shortCommand(command: string): string {
  const oneLine = command.replace(/\s+/g, ' ').trim();
  return oneLine.length <= commandPreviewChars ? oneLine : `${oneLine.slice(0, commandPreviewChars - 1)}…`;
}

/** The activity summary of a check (1-based `check`) or of the `on_failure` command (`check` 0). */
export function checkSummary(check: number, command: string): string {
  return check === 0 ? `on_failure: ${shortCommand(command)}` : `check ${check}: ${shortCommand(command)}`;
}

/** What a failure is called in texts: `check 1 (pytest -q)` or `on_failure (git stash)`. */
export function checkName(failure: Pick<CheckFailure, 'check' | 'command'>): string {
  return `${failure.check === 0 ? 'on_failure' : `check ${failure.check}`} (${shortCommand(failure.command)})`;
}

/** One failure in a sentence, with its output preview on the following lines. */
function failureText(failure: CheckFailure): string {
  const output = failure.outputPreview.trim();
  return `${checkName(failure)} ${failure.reason}${output.length > 0 ? `; its output:\n${output}` : ' (no output)'}`;
}

/** The diagnostic of a run whose checks still failed on its last attempt. */
export function checksFailedDiagnostic(attempts: number, failure: CheckFailure): string {
  return `checks failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${failureText(failure)}`;
}

/** The diagnostic of a run whose `on_failure` command failed (the subagent is not started again after it). */
export function onFailureDiagnostic(attempt: number, failure: CheckFailure): string {
  return `checks failed on attempt ${attempt}, and then ${failureText(failure)}; the subagent was not started again`;
}

/** The diagnostic of a run whose check was not run at all (the policy refused it, a person denied it): no retry can change that. */
export function checkNotRunDiagnostic(failure: CheckFailure): string {
  return `the checks could not run: ${checkName(failure)} ${failure.reason}`;
}

/** The transcript event when an attempt's checks failed and the subagent starts again. */
export function retryEvent(attempt: number, attempts: number, failure: CheckFailure): string {
  return `[checks] attempt ${attempt} of ${attempts}: ${checkName(failure)} ${failure.reason}; starting again from the recipe's instructions`;
}
