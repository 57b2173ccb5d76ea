import { describe, expect, test } from 'vitest';
import { LiveView, printable } from '../../src/cli/live-view';
import type { CliIo } from '../../src/cli/cli-io';
import type { PeekView } from '../../src/contracts/delegation-api';
import { liveTextChars, peekLiveTextChars } from '../../src/contracts/limits/workflow';
import { asLiveText, liveText, liveTextShown } from '../../src/contracts/live-text';
import type { SubagentPeek } from '../../src/contracts/subagent-result';
import { formatPeek } from '../../src/domain/delegation-texts';
import { decodeCursor, encodeCursor, liveEvents, type LiveCursor } from '../../src/domain/live-events';
import { usageView } from '../../src/domain/model-cost';

/** The pure parts of live output: the heartbeat details, the events a look yields, the parent's peek text, the CLI's view. */

const peek = (overrides: Partial<PeekView> = {}): PeekView => ({
  workflowId: 'errand-0000000000000001',
  label: 'test',
  state: 'running',
  startedAt: 1_000,
  lastActivityAt: 2_000,
  turns: 1,
  maxTurns: 10,
  toolCalls: 0,
  lastToolCall: null,
  lastAssistantText: null,
  usage: { inputTokens: 0, outputTokens: 0 },
  model: 'scripted/scripted-model',
  ...overrides,
});

describe('the heartbeat details', () => {
  test('keep the end of a long text with the count of all its characters, and read back only in their shape', () => {
    const text = 'x'.repeat(liveTextChars) + 'the end';
    const live = liveText(text, 3, 2);

    expect(live).toEqual({ partialText: text.slice(-liveTextChars), chars: text.length, turn: 3, attempt: 2 });
    expect(liveTextShown(live)).toBe(`…${text.slice(-liveTextChars)}`);
    expect(liveTextShown(liveText('short', 1))).toBe('short');
    expect(asLiveText(JSON.parse(JSON.stringify(live)))).toEqual(live);
    expect(asLiveText({ partialText: 'a', chars: 1 })).toBeUndefined();
    expect(asLiveText({ partialText: 'a', chars: 1, turn: 1, attempt: '2' })).toBeUndefined();
    expect(asLiveText('text')).toBeUndefined();
  });
});

describe('live events', () => {
  test('a first look describes the current state; later looks only what is new', () => {
    const first = liveEvents(undefined, { state: 'running', peek: peek({ turns: 1, partial: { text: 'Hello', chars: 5, turn: 1, attempt: 1 } }) });
    const second = liveEvents(first.cursor, { state: 'running', peek: peek({ turns: 1, partial: { text: 'Hello, world', chars: 12, turn: 1, attempt: 1 } }) });
    const same = liveEvents(second.cursor, { state: 'running', peek: peek({ turns: 1, partial: { text: 'Hello, world', chars: 12, turn: 1, attempt: 1 } }) });

    expect(first.events).toEqual([
      { event: 'state', data: { state: 'running' } },
      { event: 'turn', data: { turn: 1, maxTurns: 10 } },
      { event: 'text', data: { turn: 1, attempt: 1, delta: 'Hello', chars: 5 } },
    ]);
    expect(second.events).toEqual([{ event: 'text', data: { turn: 1, attempt: 1, delta: ', world', chars: 12 } }]);
    expect(same.events).toEqual([]);
  });

  test('a tool call of the last turn comes before the next turn; a retried call starts its text again', () => {
    const told: LiveCursor = { state: 'running', turns: 1, toolCalls: 0, queuedMessages: 0, text: { turn: 1, attempt: 1, chars: 9 } };
    const next = liveEvents(told, {
      state: 'running',
      peek: peek({ turns: 2, toolCalls: 2, lastToolCall: { name: 'developer__shell', argumentsPreview: '{}', turn: 1 }, queuedMessages: 1, partial: { text: 'Now', chars: 3, turn: 2, attempt: 1 } }),
    });
    const retried = liveEvents(next.cursor, { state: 'running', peek: peek({ turns: 2, toolCalls: 2, queuedMessages: 1, partial: { text: 'Again', chars: 5, turn: 2, attempt: 2 } }) });

    expect(next.events.map((event) => event.event)).toEqual(['tool', 'turn', 'text', 'queued']);
    expect(next.events[0]).toEqual({ event: 'tool', data: { name: 'developer__shell', argumentsPreview: '{}', turn: 1, toolCalls: 2 } });
    expect(next.events[2]).toEqual({ event: 'text', data: { turn: 2, attempt: 1, delta: 'Now', chars: 3 } });
    expect(retried.events).toEqual([{ event: 'text', data: { turn: 2, attempt: 2, delta: 'Again', chars: 5, restart: true } }]);
  });

  test('marks a gap when more arrived between two looks than the live window holds', () => {
    const told: LiveCursor = { state: 'running', turns: 1, toolCalls: 0, queuedMessages: 0, text: { turn: 1, attempt: 1, chars: 10 } };
    const window = 'w'.repeat(liveTextChars);

    const look = liveEvents(told, { state: 'running', peek: peek({ partial: { text: window, chars: liveTextChars + 500, turn: 1, attempt: 1 } }) });

    expect(look.events).toEqual([{ event: 'text', data: { turn: 1, attempt: 1, delta: window, chars: liveTextChars + 500, gap: true } }]);
  });

  test('without a peek only the state is compared', () => {
    expect(liveEvents(undefined, { state: 'completed', peek: null }).events).toEqual([{ event: 'state', data: { state: 'completed' } }]);
  });

  test('the cursor is the event id and comes back from it; anything else is no cursor', () => {
    const cursor: LiveCursor = { state: 'waiting_approval', turns: 12, toolCalls: 3, queuedMessages: 1, text: { turn: 12, attempt: 2, chars: 4500 } };

    expect(encodeCursor(cursor)).toBe('12.3.1.12.2.4500.waiting_approval');
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    expect(decodeCursor(encodeCursor({ ...cursor, text: null }))).toEqual({ ...cursor, text: null });
    expect(decodeCursor('settled')).toBeUndefined();
    expect(decodeCursor('1.2.3.x.running')).toBeUndefined();
    expect(decodeCursor(undefined)).toBeUndefined();
  });
});

describe('what load(task_id, peek: true) shows', () => {
  const { tasks: _apiTasks, ...apiPeek } = peek();
  const { totalUsage: _apiTotal, ...apiOwn } = apiPeek;
  const subagentPeek: SubagentPeek = { ...apiOwn, usage: usageView(apiPeek.usage), turns: 2 };

  test('the text in flight, marked partial with its turn; a long one by its end', () => {
    const text = formatPeek('task-1', subagentPeek, 'running', 5_000, liveText('I am writing', 2, 1));
    const long = formatPeek('task-1', subagentPeek, 'running', 5_000, liveText(`${'a'.repeat(2 * peekLiveTextChars)}END`, 2, 1));
    const none = formatPeek('task-1', subagentPeek, 'running', 5_000);
    const early = formatPeek('task-1', undefined, 'starting', 5_000, liveText('first words', 1));

    expect(text.split('\n').at(-1)).toBe('Writing now (partial, turn 2): I am writing');
    expect(long.split('\n').at(-1)).toBe(`Writing now (partial, turn 2): …${'a'.repeat(peekLiveTextChars - 3)}END`);
    expect(none).not.toContain('Writing now');
    expect(none).toContain('Turns: 2 of 10');
    expect(early).toBe('Task: task-1\nState: starting\nNo progress reported yet.\nWriting now (partial, turn 1): first words');
  });
});

/** A captured CLI output. */
function io(interactive: boolean): CliIo & { err: string[] } {
  const err: string[] = [];
  return { err, stdout: () => undefined, stderr: (text) => void err.push(text), interactive, columns: 40 };
}

describe('the CLI live view', () => {
  test('without a terminal: a progress line when something changes, each piece of text once, no control sequences', () => {
    const out = io(false);
    const view = new LiveView(out);
    view.update('errand-x', 'running', peek({ turns: 1, partial: { text: 'Hello', chars: 5, turn: 1, attempt: 1 } }));
    view.update('errand-x', 'running', peek({ turns: 1, partial: { text: 'Hello there', chars: 11, turn: 1, attempt: 1 } }));
    view.update('errand-x', 'running', peek({ turns: 1, partial: { text: 'Again\u001b[2J', chars: 9, turn: 1, attempt: 2 } }));
    view.finish();

    const text = out.err.join('');
    expect(text.replace(/ · \d+s/, '')).toBe(
      'errand-x · running · turn 1/10\n[turn 1 writing]\nHello there\n[turn 1: the model call was retried (attempt 2); its text starts again]\nAgain[2J\n',
    );
    expect(text).not.toContain('\r');
    expect(text).not.toContain('\u001b');
  });

  test("a tool name the model chose is printed as text, never as the terminal's control sequences", () => {
    const out = io(false);
    const view = new LiveView(out);
    view.update('errand-x', 'running', peek({ turns: 2, toolCalls: 1, lastToolCall: { name: 'evil\u001b]0;pwned\u0007\u001b[2J', argumentsPreview: '{}', turn: 1 } }));
    view.finish();
    const text = out.err.join('');
    expect(text).toContain('last tool evil');
    expect(text).not.toContain('\u001b');
    expect(text).not.toContain('\u0007');
  });

  test('on a terminal: redraws the progress line and the last lines of the text in place, then clears them', () => {
    const out = io(true);
    const view = new LiveView(out);
    const long = Array.from({ length: 12 }, (_, index) => `line ${index + 1}`).join('\n');
    view.update('errand-x', 'running', peek({ partial: { text: long, chars: long.length, turn: 1, attempt: 1 } }));
    view.update('errand-x', 'running', peek({ partial: { text: `${long}\nline 13`, chars: long.length + 8, turn: 1, attempt: 1 } }));
    view.finish();

    const [first, second, cleared] = out.err;
    expect(first?.startsWith('\r\u001b[J')).toBe(true);
    expect(first?.split('\n').slice(1)).toEqual(['  line 7', '  line 8', '  line 9', '  line 10', '  line 11', '  line 12']);
    // The second draw goes back up over the six text lines first.
    expect(second?.startsWith('\u001b[6A\r\u001b[J')).toBe(true);
    expect(second?.split('\n').at(-1)).toBe('  line 13');
    expect(cleared).toBe('\u001b[6A\r\u001b[J');
  });

  test('takes terminal control characters out of the model\'s text', () => {
    expect(printable('a\u001b]0;title\u0007b\r\nc\td\u009b')).toBe('a]0;titleb\nc  d');
  });
});
