import type { ModelTurnInput, ModelTurnOutput } from '../contracts/activities';
import { inlineTextLimit, previewLength } from '../contracts/limits/workflow';
import type { ModelResponse } from '../contracts/model';
import { toolTimeLimitMs } from '../domain/activity-time-limits';
import { finalOutputToolName } from '../domain/final-output';
import { preview } from '../domain/subagent-prompt';
import { developerToolsetName } from '../tools/developer-toolset-name';
import { qualifyToolName } from '../tools/tool-name';
import { resolvePolicy, type ToolPolicyConfig } from '../tools/tool-policy';

/**
 * Built-in tools that only touch the working directory's files and finish quickly: the workflow runs them
 * as local activities (inside the workflow task that received the model's answer, one workflow task less
 * per turn). run_command (long, needs heartbeats and cancellation) and MCP tools stay normal activities.
 */
const fastBuiltInTools: ReadonlySet<string> = new Set(['read_file', 'write_file', 'list_directory', 'search_text'].map((name) => qualifyToolName(developerToolsetName, name)));

/** What the workflow sees of an answer: previews, plus full arguments for the tools it runs itself. */
export function toModelTurnOutput(response: ModelResponse, input: ModelTurnInput, operator: ToolPolicyConfig | undefined, maxOutputTokens: number): ModelTurnOutput {
  const orchestration = input.orchestrationTools ?? [];
  const narrowings = input.toolPolicy ?? [];
  const truncated = response.text.length > inlineTextLimit;
  return {
    text: truncated ? preview(response.text, inlineTextLimit) : response.text,
    textTruncated: truncated,
    toolCalls: response.toolCalls.map((call) => {
      // The final_output tool is never under a policy (see modelTurn): no approval, no denial.
      const decision = input.finalOutput && call.name === finalOutputToolName ? 'allow' : resolvePolicy(operator, narrowings, call.name);
      const handledByWorkflow = orchestration.includes(call.name);
      const timeLimitMs = toolTimeLimitMs(call.name, call.arguments);
      return {
        id: call.id,
        name: call.name,
        argumentsPreview: preview(JSON.stringify(call.arguments), previewLength),
        // The workflow handles orchestration tools itself, so it needs their full arguments.
        ...(handledByWorkflow ? { arguments: call.arguments } : {}),
        ...(decision === 'ask' ? { needsApproval: true as const } : {}),
        ...(handledByWorkflow && decision === 'deny' ? { denied: `The tool ${call.name} is not allowed by policy.` } : {}),
        ...(handledByWorkflow && decision !== 'deny' && call.invalidArguments !== undefined ? { denied: invalidArgumentsText(call.name, call.invalidArguments) } : {}),
        ...(!handledByWorkflow && fastBuiltInTools.has(call.name) ? { local: true as const } : {}),
        ...(timeLimitMs !== undefined ? { timeLimitMs } : {}),
      };
    }),
    finishReason: response.finishReason,
    usage: response.usage,
    maxOutputTokens,
    ...(response.answerCap ? { answerCap: response.answerCap } : {}),
  };
}

/** The tool result of a call whose arguments were not a JSON object: what was wrong, so the model can call again. */
export function invalidArgumentsText(tool: string, raw: string): string {
  return `The call of ${tool} was not run: its arguments are not a JSON object (${raw.length === 0 ? 'empty' : `got ${raw}`}). Call ${tool} again with a JSON object that matches its input schema.`;
}
