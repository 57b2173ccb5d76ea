import type { RunCheckInput, RunCheckOutput } from '../contracts/run-activities';
import { checkOutputPreviewChars } from '../contracts/limits/sources';
import { formatDenial } from '../domain/delegation-texts';
import type { CommandOptions } from '../tools/command-environment';
import type { PathRules } from '../tools/confine-path';
import { runShellCommand, type CommandOutcome } from '../tools/developer/run-command';
import { developerToolsetName } from '../tools/developer-toolset-name';
import { toolNameSeparator } from '../contracts/limits/tools';
import { checkToolCall, resolvePolicy, type ToolPolicyConfig } from '../tools/tool-policy';
import type { BlobStore } from './blob-store';
import { conversationSegment } from './conversation-store';
import { withHeartbeat, type HeartbeatSettings } from './heartbeat';
import { storedOutcome, storeOutcome } from './stored-outcomes';

/** What the check activity needs: the command rules of `run_command`, the operator's policy, the blob store. */
export interface CheckDependencies {
  blobs: BlobStore;
  /** The environment allow-list and the sandbox, exactly as `run_command` gets them. */
  commands: CommandOptions;
  paths: PathRules;
  toolPolicy?: ToolPolicyConfig;
  /** How the check heartbeats (keep-alive, the in-flight registry); absent: the defaults. */
  heartbeats?: HeartbeatSettings;
}

/** The tool whose policy decides whether a check may run: a check is a shell command like any other. */
const runCommandTool = `${developerToolsetName}${toolNameSeparator}run_command`;

/** The start and the end of a long output, with what was cut in between. */
export function outputPreview(output: string, maxChars: number = checkOutputPreviewChars): string {
  if (output.length <= maxChars) return output;
  const half = Math.floor(maxChars / 2);
  return `${output.slice(0, half)}\n[… ${output.length - 2 * half} characters cut …]\n${output.slice(output.length - half)}`;
}

/** Why a command failed, in words (empty reason for a pass). */
function describe(outcome: CommandOutcome, timeoutSeconds: number): { passed: boolean; reason: string } {
  if (outcome.refused !== undefined) return { passed: false, reason: `could not run: ${outcome.refused}` };
  if (outcome.stoppedBy === 'timeout') return { passed: false, reason: `timed out after ${timeoutSeconds} s and was killed` };
  if (outcome.stoppedBy === 'cancel') return { passed: false, reason: 'was cancelled' };
  if (outcome.exitCode === 0) return { passed: true, reason: 'exited with code 0' };
  if (outcome.exitCode !== null) return { passed: false, reason: `exited with code ${outcome.exitCode}` };
  return { passed: false, reason: `was killed by signal ${outcome.signal ?? 'unknown'}` };
}

/**
 * Runs one of a recipe's checks (goose `retry`), or its `on_failure` command, in the subagent's working
 * directory, under the rules of `run_command`: its environment allow-list, its sandbox, its path
 * confinement, and its policy — a check runs where `run_command` would run (`ask`: after an approval the
 * workflow asks for; `deny`: not at all). The outcome is stored by attempt and step, so a retried
 * activity never runs a finished check again.
 */
export async function runCheck(input: RunCheckInput, deps: CheckDependencies): Promise<RunCheckOutput> {
  const key = `outcomes/checks/${conversationSegment(input.conversationId)}/${input.step}.json`;
  const stored = await storedOutcome<RunCheckOutput>(deps.blobs, key);
  if (stored) return stored;
  const narrowings = input.toolPolicy ?? [];
  if (input.approval?.decision === 'deny') return storeOutcome(deps.blobs, key, { ran: false, refused: formatDenial(runCommandTool, input.approval) });
  const verdict = checkToolCall(deps.toolPolicy, narrowings, runCommandTool, input.approval?.decision === 'approve');
  if (!verdict.run) {
    // Waiting for a decision is not an outcome: nothing is stored, and the call after the decision runs it.
    if (resolvePolicy(deps.toolPolicy, narrowings, runCommandTool) === 'ask') return { ran: false, needsApproval: true };
    return storeOutcome(deps.blobs, key, { ran: false, refused: `${verdict.message} Recipe checks are shell commands and run only where ${runCommandTool} may.` });
  }
  const outcome = await withHeartbeat((abortSignal) =>
    runShellCommand(input.command, { workingDir: input.workingDir, timeoutMs: input.timeoutSeconds * 1_000, abortSignal }, deps.commands, deps.paths),
  deps.heartbeats);
  const { passed, reason } = describe(outcome, input.timeoutSeconds);
  const preview = outputPreview(outcome.output);
  let outputKey: string | undefined;
  if (preview.length < outcome.output.length) {
    outputKey = `outcomes/checks/${conversationSegment(input.conversationId)}/${input.step}.output.txt`;
    await deps.blobs.put(outputKey, outcome.output).catch(async (error: unknown) => {
      // A retry after a lost worker ran the command again: its output may differ. The first one stays.
      if ((await deps.blobs.get(outputKey ?? '')) === undefined) throw error;
    });
  }
  return storeOutcome(deps.blobs, key, { ran: true, passed, exitCode: outcome.exitCode, reason, outputPreview: preview, ...(outputKey ? { outputKey } : {}) });
}
