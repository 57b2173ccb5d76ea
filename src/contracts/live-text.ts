import type { LivePartial } from './delegation-api';
import { liveTextChars } from './limits/workflow';

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
  /**
   * The activity attempt that wrote it. Temporal keeps an attempt's heartbeat details for the next attempt,
   * so a reader compares this with the pending activity's attempt: details of an earlier attempt (a stream
   * that broke off and is being retried) are not the text being written now.
   */
  attempt?: number;
}

/** The heartbeat details for `text` written so far in `turn` by activity attempt `attempt`: its last characters. */
export function liveText(text: string, turn: number, attempt?: number): LiveText {
  return {
    partialText: text.length > liveTextChars ? text.slice(-liveTextChars) : text,
    chars: text.length,
    turn,
    ...(attempt === undefined ? {} : { attempt }),
  };
}

/** Reads heartbeat details back (they come from an activity of ours, but through a data converter). */
export function asLiveText(value: unknown): LiveText | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { partialText, chars, turn, attempt } = value as Record<string, unknown>;
  if (typeof partialText !== 'string' || typeof chars !== 'number' || typeof turn !== 'number') return undefined;
  if (attempt !== undefined && typeof attempt !== 'number') return undefined;
  return { partialText, chars, turn, ...(typeof attempt === 'number' ? { attempt } : {}) };
}

/** The text of `live` as a reader shows it: marked with a leading ellipsis when its start was cut. */
export function liveTextShown(live: Pick<LiveText, 'partialText' | 'chars'>): string {
  return live.chars > live.partialText.length ? `…${live.partialText}` : live.partialText;
}

/** The API's form of the text-so-far (`peek.partial`). */
export function livePartial(live: LiveText): LivePartial {
  return { text: live.partialText, chars: live.chars, turn: live.turn, ...(live.attempt === undefined ? {} : { attempt: live.attempt }) };
}
