import type { WorkflowInfo } from '@temporalio/workflow';
import type { ConversationPrefix, MessageRef } from '../contracts/subagent';
import type { Agent } from './agent';

/**
 * The key of a workflow's conversation in the blob store: its id and the run id of its first execution,
 * which stays the same across continue-as-new and changes when an id is reused by a new start, so a reused
 * id never replays another run's stored answers. A reset keeps the chain's first run id (as retries and
 * cron do, Temporal documents), so a reset run finds the answers stored for the turns it re-executes and
 * reuses them: a reset does not redo turns (docs/deploy.md says so; start a new delegation to redo one).
 */
export function conversationIdOf(info: Pick<WorkflowInfo, 'workflowId' | 'firstExecutionRunId'>): string {
  return `${info.workflowId}@${info.firstExecutionRunId}`;
}

/** Where the last assistant text is stored, if there is one. */
export function lastTextRef(agent: Agent): MessageRef | undefined {
  return agent.state.lastText ? { conversationId: agent.conversationId, seq: agent.state.lastText.seq } : undefined;
}

/**
 * The whole text of the last assistant message: inline when short, read back by reference when it was
 * cut (an activity). A store that cannot be read leaves the preview, marked as such.
 */
export async function lastAssistantFullText(agent: Agent): Promise<string> {
  const last = agent.state.lastText;
  if (!last) return '';
  if (!last.truncated) return last.text;
  try {
    return await agent.activities.store.readMessageText.executeWithOptions({ summary: `read message ${last.seq}` }, [{ conversationId: agent.conversationId, seq: last.seq }]);
  } catch {
    return `${last.text}\n[the rest of this message could not be read from the blob store]`;
  }
}

/**
 * The text of the last assistant message for a workflow's result or an update's answer: inline when short,
 * read back when it was cut and is at most `maxChars` long, else the preview with `cut` set (the whole text
 * stays in the conversation store, at {@link lastTextRef}). Never more than `maxChars` enters history.
 */
export async function lastAssistantTextUpTo(agent: Agent, maxChars: number): Promise<{ text: string; cut: boolean }> {
  const last = agent.state.lastText;
  if (!last) return { text: '', cut: false };
  if (!last.truncated) return { text: last.text, cut: false };
  try {
    const read = await agent.activities.store.readMessageTextUpTo.executeWithOptions({ summary: `read message ${last.seq}` }, [{ conversationId: agent.conversationId, seq: last.seq, maxChars }]);
    return 'text' in read ? { text: read.text, cut: false } : { text: last.text, cut: true };
  } catch {
    // The reader tries the store again by the reference (the API does): the preview stands in meanwhile.
    return { text: last.text, cut: true };
  }
}

/**
 * What a fork made by the `delegate` call in the assistant message at `assistantSeq` starts from: this
 * conversation's messages before that message — so every turn in it is complete (each tool call answered)
 * and neither the forking call nor its sibling calls are in it — as this agent's model saw them (its
 * compaction state, its own prefix when it is a fork too). A reference: nothing is copied.
 */
export function forkReference(agent: Agent, assistantSeq: number): ConversationPrefix {
  return {
    conversationId: agent.conversationId,
    length: assistantSeq,
    ...(agent.state.context ? { window: agent.state.context } : {}),
    ...(agent.options.prefix ? { prefix: agent.options.prefix } : {}),
  };
}
