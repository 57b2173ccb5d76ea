import { liveTextChars } from './limits';

/**
 * The text a model call has written so far, as the model-call activity sends it with each heartbeat.
 * Read from the pending activity by the API (peek, the event stream), the parent's `load(peek)` and the
 * Web UI. Partial by nature: the turn's final answer replaces it.
 */
export interface LiveText {
  /** The end of the text written so far (at most {@link liveTextChars} characters). */
  partialText: string;
  /** Characters written so far in this call (more than `partialText` holds when it was cut). */
  chars: number;
  /** The turn of the run this call belongs to. */
  turn: number;
}

/** The heartbeat details for `text` written so far in `turn`: its last characters. */
export function liveText(text: string, turn: number): LiveText {
  return { partialText: text.length > liveTextChars ? text.slice(-liveTextChars) : text, chars: text.length, turn };
}

/** Reads heartbeat details back (they come from an activity of ours, but through a data converter). */
export function asLiveText(value: unknown): LiveText | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { partialText, chars, turn } = value as Record<string, unknown>;
  if (typeof partialText !== 'string' || typeof chars !== 'number' || typeof turn !== 'number') return undefined;
  return { partialText, chars, turn };
}
