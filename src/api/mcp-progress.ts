import type { DelegationStatus } from '../contracts/delegation-api';
import { escapeChildWords } from '../domain/child-words';

/**
 * Progress of a long foreground tool call over MCP (`notifications/progress`, for a client that sent a
 * progress token): while the call runs, every interval the subagent it waits for is peeked and, when there
 * is something to say, a notification goes out with its turns, cost and last words. A client that resets
 * its timeout on progress (the MCP SDKs can) keeps the call alive as long as the subagent works.
 */

/** The longest piece of a subagent's last words a progress message carries. */
const lastWordsChars = 200;

/** The progress message of a delegation's status: turns, cost and its last words (escaped, cut). */
export function progressMessage(status: Pick<DelegationStatus, 'id' | 'state' | 'turns' | 'peek'>): string {
  const usage = status.peek?.totalUsage ?? status.peek?.usage;
  const cost = usage?.costUsd !== undefined ? `, $${usage.costUsd.toFixed(6)}` : '';
  const words = status.peek?.partial?.text ?? status.peek?.lastAssistantText ?? '';
  const cut = words.length > lastWordsChars ? `…${words.slice(-lastWordsChars)}` : words;
  return `${status.id} ${status.state}: ${status.turns} turn${status.turns === 1 ? '' : 's'}${cost}${cut ? ` — last words: ${escapeChildWords(cut.replace(/\s+/g, ' '))}` : ''}`;
}

/**
 * Runs `call`; meanwhile every `intervalMs` asks `look` what to report and sends it with `send` (numbered, so
 * progress increases). A failed look or send is skipped: progress is a courtesy, the call's answer is not.
 */
export async function withProgress<T>(call: Promise<T>, look: () => Promise<string | undefined>, send: (progress: number, message: string) => Promise<void>, intervalMs: number): Promise<T> {
  let reports = 0;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void look()
      .then(async (message) => {
        if (message === undefined) return;
        reports += 1;
        await send(reports, message);
      })
      .catch(() => undefined)
      .finally(() => {
        busy = false;
      });
  }, intervalMs);
  try {
    return await call;
  } finally {
    clearInterval(timer);
  }
}
