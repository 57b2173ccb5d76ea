import type { LivePartial, PeekView } from '../contracts/delegation-api';

/**
 * What changed in a running delegation between two looks at it (state and peek, with the text the model
 * is writing now), as events: the event stream of the API (`GET /v1/delegations/{id}/events`) sends them,
 * and `errand peek --follow --json` prints them. Pure: the caller looks, this compares.
 */

/** What a watcher has been told so far; the next look reports only what is new. It is also the event id. */
export interface LiveCursor {
  state: string;
  turns: number;
  toolCalls: number;
  queuedMessages: number;
  /** The text-so-far told: which model call (turn and attempt) and how many of its characters. */
  text: { turn: number; attempt: number; chars: number } | null;
}

/** One look at a running delegation. */
export interface LiveObservation {
  state: string;
  /** Null when no worker answered the peek query: only the state is compared. */
  peek: PeekView | null;
}

/** An event of the stream: its name and its JSON data. */
export type LiveEvent =
  | { event: 'state'; data: { state: string } }
  | { event: 'turn'; data: { turn: number; maxTurns: number } }
  | { event: 'tool'; data: { name: string; argumentsPreview: string; turn: number; toolCalls: number } }
  | { event: 'text'; data: TextEventData }
  | { event: 'queued'; data: { queuedMessages: number } };

/** A piece of the text the model is writing. */
export interface TextEventData {
  turn: number;
  attempt: number;
  /** The new text, to append to what this model call wrote before. */
  delta: string;
  /** Characters this model call has written so far. */
  chars: number;
  /** The call was retried (its stream broke off): drop what it wrote before, the text starts again. */
  restart?: true;
  /** Some text between the last piece and this one is not available (more than the live window arrived at once). */
  gap?: true;
}

/** Compares a look with what was told; returns the events to send and the new cursor. */
export function liveEvents(told: LiveCursor | undefined, seen: LiveObservation): { events: LiveEvent[]; cursor: LiveCursor } {
  const events: LiveEvent[] = [];
  const before: LiveCursor = told ?? { state: '', turns: 0, toolCalls: 0, queuedMessages: 0, text: null };
  if (seen.state !== before.state) events.push({ event: 'state', data: { state: seen.state } });
  const peek = seen.peek;
  if (!peek) return { events, cursor: { ...before, state: seen.state } };

  const tool = peek.lastToolCall && peek.toolCalls > before.toolCalls ? peek.lastToolCall : undefined;
  const toolEvent: LiveEvent | undefined = tool ? { event: 'tool', data: { name: tool.name, argumentsPreview: tool.argumentsPreview, turn: tool.turn, toolCalls: peek.toolCalls } } : undefined;
  // A tool call of an earlier turn goes before the new turn; one of the current turn after it.
  if (toolEvent && tool && tool.turn < peek.turns) events.push(toolEvent);
  if (peek.turns > before.turns) events.push({ event: 'turn', data: { turn: peek.turns, maxTurns: peek.maxTurns } });
  if (toolEvent && tool && tool.turn >= peek.turns) events.push(toolEvent);

  const text = textEvent(before.text, peek.partial);
  if (text) events.push({ event: 'text', data: text });
  const queuedMessages = peek.queuedMessages ?? 0;
  if (queuedMessages > before.queuedMessages) events.push({ event: 'queued', data: { queuedMessages } });

  const partial = peek.partial;
  return {
    events,
    cursor: {
      state: seen.state,
      turns: Math.max(before.turns, peek.turns),
      toolCalls: Math.max(before.toolCalls, peek.toolCalls),
      queuedMessages,
      text: partial ? { turn: partial.turn, attempt: partial.attempt ?? 1, chars: Math.max(partial.chars, sameCall(before.text, partial) ? before.text?.chars ?? 0 : 0) } : before.text,
    },
  };
}

function sameCall(told: LiveCursor['text'], partial: LivePartial): boolean {
  return told !== null && told.turn === partial.turn && told.attempt === (partial.attempt ?? 1);
}

/** The new piece of text, if any: the suffix written since the last look, or all of a new call's text. */
function textEvent(told: LiveCursor['text'], partial: LivePartial | undefined): TextEventData | undefined {
  if (!partial) return undefined;
  const attempt = partial.attempt ?? 1;
  const base = { turn: partial.turn, attempt, chars: partial.chars };
  if (told && sameCall(told, partial)) {
    const added = partial.chars - told.chars;
    if (added <= 0) return undefined;
    if (added > partial.text.length) return { ...base, delta: partial.text, gap: true };
    return { ...base, delta: partial.text.slice(partial.text.length - added) };
  }
  if (partial.text.length === 0) return undefined;
  const restart = told !== null && told.turn === partial.turn;
  return { ...base, delta: partial.text, ...(restart ? { restart: true as const } : {}), ...(partial.chars > partial.text.length ? { gap: true as const } : {}) };
}

const cursorPattern = /^(\d{1,9})\.(\d{1,9})\.(\d{1,9})\.(?:(\d{1,9})\.(\d{1,9})\.(\d{1,12})|-)\.([a-z_]{1,40})$/;

/** The cursor as an event id (`Last-Event-ID` brings it back on a reconnect). */
export function encodeCursor(cursor: LiveCursor): string {
  const text = cursor.text ? `${cursor.text.turn}.${cursor.text.attempt}.${cursor.text.chars}` : '-';
  return `${cursor.turns}.${cursor.toolCalls}.${cursor.queuedMessages}.${text}.${cursor.state}`;
}

/** Reads an event id back; undefined when it is not one of ours (the stream then starts from the current state). */
export function decodeCursor(id: string | undefined): LiveCursor | undefined {
  const match = id === undefined ? null : cursorPattern.exec(id);
  if (!match) return undefined;
  const [, turns, toolCalls, queued, textTurn, textAttempt, textChars, state] = match;
  return {
    state: state ?? '',
    turns: Number(turns),
    toolCalls: Number(toolCalls),
    queuedMessages: Number(queued),
    text: textTurn !== undefined && textAttempt !== undefined && textChars !== undefined ? { turn: Number(textTurn), attempt: Number(textAttempt), chars: Number(textChars) } : null,
  };
}
