import { patched, setHandler } from '@temporalio/workflow';
import type { TextPart } from '../contracts/activities';
import { previewLength } from '../contracts/limits/workflow';
import { mcpSessionTools, type CallToolInput, type CallToolResult } from '../contracts/mcp-session';
import { ackNoticesSignal, callToolUpdate, pendingNoticesQuery } from '../contracts/mcp-session-messages';
import { noticeParts } from '../domain/notice-parts';
import { preview } from '../domain/subagent-prompt';
import { markNoticesRead } from './notices-read';
import type { Agent } from './agent';
import type { TaskOrchestrator } from './task-orchestration';
import { toolError } from './tool-outcomes';
import { FailureType } from '../contracts/failures';
import { updateRefusal } from './update-refusal';

/**
 * The `callTool` update of an MCP session (SEMANTICS §6): the MCP client's tool call runs through the same
 * {@link TaskOrchestrator} as a session model's call, so texts, limits and task records are the same. The
 * notices that settled tasks left since the previous call are handed to the client with the result (as
 * goose does for its own model) instead of waking a model.
 */
export function registerMcpToolCalls(agent: Agent, orchestrator: TaskOrchestrator, refuse: () => void): void {
  setHandler(pendingNoticesQuery, () => agent.state.pendingNotices.map(noticeParts));
  setHandler(ackNoticesSignal, (input) => acknowledgeNotices(agent, input.upTo));
  setHandler(callToolUpdate, (input) => callTool(agent, orchestrator, input), {
    validator: (input) => {
      refuse();
      if (typeof input?.name !== 'string' || !(mcpSessionTools as readonly string[]).includes(input.name)) {
        throw updateRefusal(FailureType.invalidInput, `unknown tool "${String(input?.name)}"; the tools are ${mcpSessionTools.join(', ')}`);
      }
      if (typeof input.arguments !== 'object' || input.arguments === null || Array.isArray(input.arguments)) {
        throw updateRefusal(FailureType.invalidInput, `the arguments of ${input.name} must be a JSON object`);
      }
    },
  });
}

async function callTool(agent: Agent, orchestrator: TaskOrchestrator, input: CallToolInput): Promise<CallToolResult> {
  agent.touch();
  // The MCP session has no model turns, so the call counter stands in for the assistant message: it makes
  // the ids (e.g. send_message's message id) that stay the same when this update is replayed.
  const position = { assistantSeq: agent.state.toolCalls, index: 0 };
  const argumentsPreview = preview(JSON.stringify(input.arguments), previewLength);
  // One tool call with no result of its own in the conversation (an MCP session has none): counters only.
  agent.recordMcpToolCall({ name: input.name, argumentsPreview });
  const outcome = input.name === 'delegate' && input.arguments.fork === true
    ? toolError('delegate was not started: `fork` is not available through MCP (an MCP session has no conversation of its own to fork); give the context in `instructions` or `context`.')
    : await orchestrator.run({ id: `mcp-${position.assistantSeq}`, name: input.name, arguments: input.arguments, argumentsPreview }, position);
  agent.touch();
  agent.updateViews();
  // Notices stay until the caller acknowledges the answer that carried them: an answer the client never got
  // (a lost response, a wait that ended first) leaves them for the next call (at least once).
  if (!patched(mcpNoticesKeptPatch)) return { parts: outcome.parts, isError: outcome.isError, notices: takeNotices(agent) };
  const offered = agent.offerNotices();
  const last = offered.at(-1)?.number;
  return { parts: outcome.parts, isError: outcome.isError, notices: offered.map(noticeParts), ...(last !== undefined ? { noticesUpTo: last } : {}) };
}

/** The patch under which an MCP tool call keeps the notices it hands over until they are acknowledged. */
export const mcpNoticesKeptPatch = 'mcp-notices-kept-until-acknowledged';

/** Drops the notices the client got (numbers up to `upTo`); their tasks' results count as read. */
function acknowledgeNotices(agent: Agent, upTo: number): void {
  markNoticesRead(agent, agent.acknowledgeNotices(upTo));
}

/** The notices waiting for the client; a settled task's result counts as read once its notice is handed over. */
function takeNotices(agent: Agent): TextPart[][] {
  const notices = agent.takeNotices();
  markNoticesRead(agent, notices);
  return notices.map(noticeParts);
}
