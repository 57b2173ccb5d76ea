import type { TextPart } from '../contracts/agent-wire';
import type { PendingNotice } from '../contracts/carried-agent-state';

/**
 * A notice's parts, the same for a session's model (AgentLoop.flushNotices) and an MCP client
 * (mcp-tool-calls.ts): a cut output is the task's words, escaped where it is read (text-part-reader.ts),
 * and `after` closes its fence.
 */
export function noticeParts(notice: PendingNotice): TextPart[] {
  const parts: TextPart[] = [notice.text];
  // A notice with `after` fences its output as the task's words; one queued before that format has none.
  if (notice.outputRef) parts.push(notice.after !== undefined ? { ref: notice.outputRef, childWords: true } : { ref: notice.outputRef });
  if (notice.after !== undefined) parts.push(notice.after);
  return parts;
}
